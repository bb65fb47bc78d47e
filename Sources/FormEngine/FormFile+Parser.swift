import SignupProtocol

/// The form file's reader: sections and keys, line by line (`take`); its rules
/// (FormFile+Rules.swift) and the checks of the whole form (FormFile+Checks.swift).
extension FormFile {
    struct PendingField {
        var name: String
        var header: ConfigLine
        var kind: FieldKind?
        var labels: [String: String] = [:]
        var rules: [(RuleSpec, ConfigLine)] = []
        var ok: String?
        var seen: Set<String> = []
    }

    struct Parser {
        let file: String
        let knowsMessage: (String) -> Bool
        let placeholderUses: FormFile.PlaceholderUses
        var section: Section = .none
        var formHeader: ConfigLine?
        var formValues: [String: (String, ConfigLine)] = [:]
        var fields: [PendingField] = []
        var problems: [ConfigError] = []
        /// What does not stop the form loading (`warning:` lines).
        var warnings: [ConfigError] = []

        /// `broken`: after a section header with an error, whose keys are skipped.
        enum Section { case none, form, field, broken }

        init(file: String, knowsMessage: @escaping (String) -> Bool, placeholderUses: @escaping FormFile.PlaceholderUses) {
            self.file = file
            self.knowsMessage = knowsMessage
            self.placeholderUses = placeholderUses
        }

        mutating func take(_ line: ConfigLine) throws(ConfigError) {
            switch line.content {
            case .section(let words):
                switch words[0] {
                case "form":
                    guard words.count == 1 else { throw line.error(file, "[form] takes no name; write \"name = ...\" inside it") }
                    guard formHeader == nil else { throw line.error(file, "a second [form] section; one form per file") }
                    formHeader = line
                    section = .form
                case "field":
                    guard words.count == 2 else { throw line.error(file, "write [field NAME], e.g. [field username]") }
                    let name = words[1]
                    guard Self.isIdentifier(name) else {
                        throw line.error(file, "field name \"\(name)\" must be a letter then letters, digits or _ (at most 64)", offset: 6)
                    }
                    if let previous = fields.first(where: { $0.name == name }) {
                        throw line.error(file, "duplicate field \"\(name)\" (first defined on line \(previous.header.line))", offset: 6)
                    }
                    guard fields.count < FormFile.maxFields else { throw line.error(file, "more than \(FormFile.maxFields) fields") }
                    fields.append(PendingField(name: name, header: line))
                    section = .field
                default:
                    throw line.error(file, "unknown section [\(words[0])]; known: [form], [field NAME]")
                }
            case .assignment(let key, let value):
                switch section {
                case .none: throw line.error(file, "\"\(key)\" outside any section; start with [form]", atValue: false)
                case .form: try takeFormKey(key, value, line)
                case .field: try takeFieldKey(key, value, line)
                case .broken: break
                }
            }
        }

        mutating func takeFormKey(_ key: String, _ value: String, _ line: ConfigLine) throws(ConfigError) {
            let (base, locale) = try splitLocale(key, line)
            let known = ["name", "title", "submit", "action", "identity", "secret"]
            guard known.contains(base) else {
                throw line.error(file, "unknown key \"\(key)\" in [form]; known: \(known.joined(separator: ", "))", atValue: false)
            }
            if locale != nil, base != "title", base != "submit" {
                throw line.error(file, "\"\(base)\" is not translated; only title and submit take .LOCALE", atValue: false)
            }
            if let previous = formValues[key] { throw line.error(file, "\"\(key)\" set twice (first on line \(previous.1.line))", atValue: false) }
            guard !value.isEmpty else { throw line.error(file, "\"\(key)\" needs a value") }
            formValues[key] = (value, line)
        }

        mutating func takeFieldKey(_ key: String, _ value: String, _ line: ConfigLine) throws(ConfigError) {
            var field = fields.removeLast()
            defer { fields.append(field) }
            let (base, locale) = try splitLocale(key, line)
            if locale != nil, base != "label" { throw line.error(file, "\"\(base)\" is not translated; only label takes .LOCALE", atValue: false) }
            if base != "rule" {
                guard !field.seen.contains(key) else { throw line.error(file, "\"\(key)\" set twice in [field \(field.name)]", atValue: false) }
                field.seen.insert(key)
            }
            guard !value.isEmpty else { throw line.error(file, "\"\(key)\" needs a value") }
            switch base {
            case "kind":
                guard let kind = FieldKind(rawValue: value) else {
                    throw line.error(file, "unknown kind \"\(value)\"; known: \(FieldKind.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                field.kind = kind
            case "label": field.labels[locale ?? "en"] = value
            case "ok":
                try checkMessageID(value, line, offset: 0)
                // Sent with no parameters, for a value that passes (helper-50: `ok =` of a
                // text using {min} showed it as written, and of a failure id said "too short"
                // beside state ok). Warnings: forms that loaded before must still start.
                warnings += placeholderWarnings(of: value, sent: [], line, offset: 0, sender: "an ok message")
                if MessagePlaceholders.failureParameters[value] != nil {
                    warnings.append(line.error(file, "warning: \"\(value)\" is a rule's failure message; as ok = it is shown for a value that passes"))
                }
                field.ok = value
            case "rule": field.rules.append((try parseRule(value, line), line))
            default:
                throw line.error(file, "unknown key \"\(key)\" in [field \(field.name)]; known: kind, label, label.LOCALE, rule, ok", atValue: false)
            }
        }

        func splitLocale(_ key: String, _ line: ConfigLine) throws(ConfigError) -> (String, String?) {
            guard let dot = key.firstIndex(of: ".") else { return (key, nil) }
            let locale = String(key[key.index(after: dot)...])
            guard LocaleTag.isWellFormed(locale) else {
                throw line.error(file, "\"\(locale)\" is not a BCP 47 language tag (e.g. zh-CN)", atValue: false, offset: key.distance(from: key.startIndex, to: dot) + 1)
            }
            return (String(key[..<dot]), locale.replacing("_", with: "-"))
        }

        func checkMessageID(_ id: String, _ line: ConfigLine, offset: Int) throws(ConfigError) {
            guard Self.isMessageID(id) else {
                throw line.error(file, "message id \"\(id)\" must be dot-separated lower-case words (e.g. password.short)", offset: offset)
            }
            guard knowsMessage(id) else {
                throw line.error(file, "unknown message id \"\(id)\": add it to the en catalogue (messages.d/en.messages)", offset: offset)
            }
        }

        /// `NAME [ARGS...] [as MESSAGE-ID]`.
        static func isIdentifier(_ word: String) -> Bool {
            guard let first = word.unicodeScalars.first, first.isASCII, first.properties.isAlphabetic, word.utf8.count <= 64 else { return false }
            return word.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "_") }
        }

        /// Dot-separated words of a-z, 0-9 and `_`: at least two, none empty. In one pass over
        /// the bytes (every start reads each catalogue's ids; String's `contains` of a String
        /// cost a fifth of reading the built-in forms, issue 29).
        static func isMessageID(_ word: String) -> Bool {
            let bytes = word.utf8
            let dot = UInt8(ascii: ".")
            guard bytes.count <= 96, bytes.first != dot, bytes.last != dot, bytes.contains(dot) else { return false }
            var previous: UInt8 = 0
            for byte in bytes {
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"): break
                case dot where previous != dot: break
                default: return false
                }
                previous = byte
            }
            return true
        }
    }
}
