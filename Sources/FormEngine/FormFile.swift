import Protocol

/// Reads a form definition from its file format, the one operators write in
/// `/etc/signupd/forms.d/*.form` and the built-in forms are written in:
///
///     [form]
///     name = phone-login
///     title = Log in with your phone
///     title.zh-CN = 手机号登录
///     action = login            ; or signup
///     identity = phone          ; the field an account is known by
///     secret = password         ; the password field
///     submit = Log in
///
///     [field phone]
///     kind = phone              ; text, secret, username, phone, email
///     label = Phone number
///     rule = phone 11 15 as phone.too_short
///
/// Every problem is reported as `file:line:column: message` (`ConfigError`).
public enum FormFile {
    /// The most fields one form may have.
    public static let maxFields = 32

    /// Parses and checks one form. `knowsMessage` says whether a message id named by
    /// `ok =` or `as` exists (in the English catalogue).
    public static func parse(_ text: String, file: String, knowsMessage: @escaping (String) -> Bool = { _ in true }) throws(ConfigError) -> FormDefinition {
        var parser = Parser(file: file, knowsMessage: knowsMessage)
        for line in try ConfigLines.parse(text, file: file) { try parser.take(line) }
        return try parser.finish()
    }

    /// Rule names as written in files.
    public static let ruleNames = ["min-length", "max-length", "max-bytes", "characters", "username", "phone", "email", "equals", "not-containing", "password-quality", "available"]

    private struct PendingField {
        var name: String
        var header: ConfigLine
        var kind: FieldKind?
        var labels: [String: String] = [:]
        var rules: [(RuleSpec, ConfigLine)] = []
        var ok: String?
        var seen: Set<String> = []
    }

    private struct Parser {
        let file: String
        let knowsMessage: (String) -> Bool
        var section: Section = .none
        var formHeader: ConfigLine?
        var formValues: [String: (String, ConfigLine)] = [:]
        var fields: [PendingField] = []

        enum Section { case none, form, field }

        init(file: String, knowsMessage: @escaping (String) -> Bool) {
            self.file = file
            self.knowsMessage = knowsMessage
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
                }
            }
        }

        private mutating func takeFormKey(_ key: String, _ value: String, _ line: ConfigLine) throws(ConfigError) {
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

        private mutating func takeFieldKey(_ key: String, _ value: String, _ line: ConfigLine) throws(ConfigError) {
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
                field.ok = value
            case "rule": field.rules.append((try parseRule(value, line), line))
            default:
                throw line.error(file, "unknown key \"\(key)\" in [field \(field.name)]; known: kind, label, label.LOCALE, rule, ok", atValue: false)
            }
        }

        private func splitLocale(_ key: String, _ line: ConfigLine) throws(ConfigError) -> (String, String?) {
            guard let dot = key.firstIndex(of: ".") else { return (key, nil) }
            let locale = String(key[key.index(after: dot)...])
            guard LocaleTag.isWellFormed(locale) else {
                throw line.error(file, "\"\(locale)\" is not a BCP 47 language tag (e.g. zh-CN)", atValue: false, offset: key.distance(from: key.startIndex, to: dot) + 1)
            }
            return (String(key[..<dot]), locale.replacing("_", with: "-"))
        }

        private func checkMessageID(_ id: String, _ line: ConfigLine, offset: Int) throws(ConfigError) {
            guard Self.isMessageID(id) else {
                throw line.error(file, "message id \"\(id)\" must be dot-separated lower-case words (e.g. password.short)", offset: offset)
            }
            guard knowsMessage(id) else {
                throw line.error(file, "unknown message id \"\(id)\": add it to the en catalogue (messages.d/en.messages)", offset: offset)
            }
        }

        /// `NAME [ARGS...] [as MESSAGE-ID]`.
        private func parseRule(_ text: String, _ line: ConfigLine) throws(ConfigError) -> RuleSpec {
            var words: [(String, Int)] = []
            var column = 0
            var current = ""
            var start = 0
            for scalar in text.unicodeScalars {
                if scalar == " " || scalar == "\t" {
                    if !current.isEmpty { words.append((current, start)) }
                    current = ""
                } else {
                    if current.isEmpty { start = column }
                    current.unicodeScalars.append(scalar)
                }
                column += 1
            }
            if !current.isEmpty { words.append((current, start)) }
            var messageID: String?
            if words.count >= 2, words[words.count - 2].0 == "as" {
                let (id, at) = words.removeLast()
                words.removeLast()
                try checkMessageID(id, line, offset: at)
                messageID = id
            }
            let (name, _) = words[0]
            let arguments = words.dropFirst()
            func count(_ range: ClosedRange<Int>, _ usage: String) throws(ConfigError) {
                guard range.contains(arguments.count) else { throw line.error(file, "usage: rule = \(usage)") }
            }
            func number(_ index: Int, _ range: ClosedRange<Int>) throws(ConfigError) -> Int {
                let (word, at) = words[index]
                guard let value = Int(word), range.contains(value) else {
                    throw line.error(file, "\"\(word)\" must be a whole number from \(range.lowerBound) to \(range.upperBound)", offset: at)
                }
                return value
            }
            func fieldName(_ index: Int) throws(ConfigError) -> String {
                let (word, at) = words[index]
                guard Self.isIdentifier(word) else { throw line.error(file, "\"\(word)\" is not a field name", offset: at) }
                return word
            }
            let rule: FieldRule
            switch name {
            case "min-length":
                try count(1...1, "min-length N")
                rule = .minLength(try number(1, 1...4096))
            case "max-length":
                try count(1...1, "max-length N")
                rule = .maxLength(try number(1, 1...65536))
            case "max-bytes":
                try count(1...1, "max-bytes N")
                rule = .maxBytes(try number(1, 1...65536))
            case "characters":
                try count(1...5, "characters CLASS... (letters, digits, ascii, space, punctuation)")
                var classes: [CharacterClass] = []
                for (word, at) in arguments {
                    guard let value = CharacterClass(rawValue: word) else {
                        throw line.error(file, "unknown character class \"\(word)\"; known: \(CharacterClass.allCases.map(\.rawValue).joined(separator: ", "))", offset: at)
                    }
                    classes.append(value)
                }
                rule = .characters(classes)
            case "username":
                try count(0...0, "username")
                rule = .username
            case "phone":
                try count(1...2, "phone MIN-DIGITS [MAX-DIGITS]")
                let minimum = try number(1, 1...30)
                let maximum = arguments.count == 2 ? try number(2, 1...30) : 15
                guard minimum <= maximum else { throw line.error(file, "phone: MIN-DIGITS \(minimum) is more than MAX-DIGITS \(maximum)", offset: words[1].1) }
                rule = .phone(minDigits: minimum, maxDigits: maximum)
            case "email":
                try count(0...0, "email")
                rule = .email
            case "equals":
                try count(1...1, "equals FIELD")
                rule = .equals(field: try fieldName(1))
            case "not-containing":
                try count(1...1, "not-containing FIELD")
                rule = .notContaining(field: try fieldName(1))
            case "password-quality":
                try count(0...1, "password-quality [USER-FIELD]")
                rule = .passwordQuality(userField: arguments.isEmpty ? nil : try fieldName(1))
            case "available":
                try count(0...0, "available")
                rule = .available
            default:
                throw line.error(file, "unknown rule \"\(name)\"; known: \(FormFile.ruleNames.joined(separator: ", "))")
            }
            return RuleSpec(rule, messageID: messageID)
        }

        func finish() throws(ConfigError) -> FormDefinition {
            guard let header = formHeader else { throw ConfigError(file: file, line: 1, column: 1, message: "no [form] section") }
            func required(_ key: String) throws(ConfigError) -> (String, ConfigLine) {
                guard let value = formValues[key] else { throw header.error(file, "[form] needs \"\(key) = ...\"", atValue: false) }
                return value
            }
            let (name, nameLine) = try required("name")
            guard name.utf8.count <= 64, name.unicodeScalars.allSatisfy({ ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "-" }),
                name.unicodeScalars.first.map({ ("a"..."z").contains($0) }) == true
            else { throw nameLine.error(file, "form name \"\(name)\" must be lower-case letters, digits and -, starting with a letter") }
            let (actionText, actionLine) = try required("action")
            guard let action = SubmitAction(rawValue: actionText) else { throw actionLine.error(file, "unknown action \"\(actionText)\"; known: signup, login") }
            _ = try required("submit")
            guard !fields.isEmpty else { throw header.error(file, "form \"\(name)\" has no [field NAME] sections", atValue: false) }

            var definitions: [FieldDefinition] = []
            for field in fields {
                guard let kind = field.kind else { throw field.header.error(file, "[field \(field.name)] needs \"kind = ...\"", atValue: false) }
                guard let english = field.labels["en"] else { throw field.header.error(file, "[field \(field.name)] needs \"label = ...\" (the English label)", atValue: false) }
                for (spec, line) in field.rules {
                    switch spec.rule {
                    case .passwordQuality where kind != .secret:
                        throw line.error(file, "rule password-quality needs kind = secret")
                    case .passwordQuality(let other?):
                        guard fields.contains(where: { $0.name == other }) else { throw line.error(file, "unknown field \"\(other)\" in rule; fields: \(fields.map(\.name).joined(separator: ", "))") }
                    case .equals(let other), .notContaining(let other):
                        guard fields.contains(where: { $0.name == other }) else { throw line.error(file, "unknown field \"\(other)\" in rule; fields: \(fields.map(\.name).joined(separator: ", "))") }
                        guard other != field.name else { throw line.error(file, "a field cannot be compared with itself") }
                    case .username where kind != .username:
                        throw line.error(file, "rule username needs kind = username")
                    case .phone where kind != .phone:
                        throw line.error(file, "rule phone needs kind = phone")
                    case .email where kind != .email:
                        throw line.error(file, "rule email needs kind = email")
                    case .available where action == .login:
                        throw line.error(file, "a login form does not check availability (action = login)")
                    case .available where formValues["identity"]?.0 != field.name:
                        throw line.error(file, "only the identity field (identity = \(formValues["identity"]?.0 ?? "?")) can be checked for availability")
                    default: break
                    }
                }
                if let (_, line) = field.rules.dropLast().first(where: { $0.0.rule == .available }) {
                    throw line.error(file, "available must be the last rule of a field (it runs after the others pass)")
                }
                if let (_, line) = field.rules.dropLast().first(where: { if case .passwordQuality = $0.0.rule { true } else { false } }) {
                    throw line.error(file, "password-quality must be the last rule of a field (it runs after the others pass)")
                }
                var labels = field.labels
                labels.removeValue(forKey: "en")
                definitions.append(FieldDefinition(name: field.name, kind: kind, labels: LocalizedText(english, labels), rules: field.rules.map(\.0), okMessageID: field.ok))
            }
            let (identityName, identityLine) = try required("identity")
            guard let identity = definitions.firstIndex(where: { $0.name == identityName }) else {
                throw identityLine.error(file, "identity names no field: \"\(identityName)\"; fields: \(definitions.map(\.name).joined(separator: ", "))")
            }
            let identityField = definitions[identity]
            guard let identityKind = identityField.kind.identityKind else {
                throw identityLine.error(file, "the identity field \"\(identityName)\" must be of kind username, phone or email, not \(identityField.kind.rawValue)")
            }
            let requiredRule: FieldRule = switch identityKind {
            case .username: .username
            case .phone: .phone(minDigits: 1, maxDigits: 30)
            case .email: .email
            }
            let hasRule = identityField.rules.contains { spec in
                switch (spec.rule, requiredRule) {
                case (.username, .username), (.phone, .phone), (.email, .email): true
                default: false
                }
            }
            guard hasRule else {
                throw identityLine.error(file, "the identity field \"\(identityName)\" needs \"rule = \(identityKind == .phone ? "phone MIN-DIGITS" : identityKind.rawValue)\": it defines the identity")
            }
            if identityField.checksAvailability, action == .login {
                throw identityLine.error(file, "a login form does not check availability; remove \"rule = available\" from \"\(identityName)\"")
            }
            if let other = definitions.first(where: { $0.checksAvailability && $0.name != identityName }) {
                throw identityLine.error(file, "only the identity field can be checked for availability, not \"\(other.name)\"")
            }
            let (secretName, secretLine) = try required("secret")
            guard let secret = definitions.firstIndex(where: { $0.name == secretName }) else {
                throw secretLine.error(file, "secret names no field: \"\(secretName)\"; fields: \(definitions.map(\.name).joined(separator: ", "))")
            }
            guard definitions[secret].kind == .secret else { throw secretLine.error(file, "the secret field \"\(secretName)\" must be of kind secret") }
            let bounded = definitions[secret].rules.contains { if case .maxBytes = $0.rule { true } else { false } }
            guard bounded else { throw secretLine.error(file, "the secret field \"\(secretName)\" needs \"rule = max-bytes N\" (at most 65536): passwords are hashed") }

            var titles = formValues.filter { $0.key.hasPrefix("title.") }.reduce(into: [String: String]()) { $0[String($1.key.dropFirst(6))] = $1.value.0 }
            var submits = formValues.filter { $0.key.hasPrefix("submit.") }.reduce(into: [String: String]()) { $0[String($1.key.dropFirst(7))] = $1.value.0 }
            let submit = formValues["submit"]!.0
            let title = formValues["title"]?.0 ?? submit
            titles.removeValue(forKey: "en")
            submits.removeValue(forKey: "en")
            return FormDefinition(
                name: name, titles: LocalizedText(title, titles), fields: definitions, submitLabels: LocalizedText(submit, submits),
                action: action, identityField: identity, secretField: secret
            )
        }

        static func isIdentifier(_ word: String) -> Bool {
            guard let first = word.unicodeScalars.first, first.isASCII, first.properties.isAlphabetic, word.utf8.count <= 64 else { return false }
            return word.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "_") }
        }

        static func isMessageID(_ word: String) -> Bool {
            word.utf8.count <= 96 && word.contains(".") && !word.hasPrefix(".") && !word.hasSuffix(".") && !word.contains("..")
                && word.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "_" || $0 == "." }
        }
    }
}

/// Reads a message catalogue: `<locale>.messages`, lines of `message.id = text`, where
/// `{name}` stands for a parameter. The locale is the file's name.
public enum MessageFile {
    public static func parse(_ text: String, locale: String, file: String) throws(ConfigError) -> MessageCatalogue {
        guard LocaleTag.isWellFormed(locale) else {
            throw ConfigError(file: file, line: 1, column: 1, message: "the file name must be a BCP 47 tag, e.g. zh-CN.messages, not \"\(locale)\"")
        }
        var texts: [String: (String, Int)] = [:]
        for line in try ConfigLines.parse(text, file: file) {
            switch line.content {
            case .section: throw line.error(file, "a message file has no sections: write \"message.id = text\"")
            case .assignment(let key, let value):
                guard FormFile.isMessageIDForCatalogue(key) else { throw line.error(file, "message id \"\(key)\" must be dot-separated lower-case words", atValue: false) }
                if let previous = texts[key] { throw line.error(file, "\"\(key)\" set twice (first on line \(previous.1))", atValue: false) }
                guard !value.isEmpty else { throw line.error(file, "\"\(key)\" needs a text") }
                texts[key] = (value, line.line)
            }
        }
        return MessageCatalogue(locale: locale.replacing("_", with: "-"), texts: texts.mapValues(\.0))
    }
}

extension FormFile {
    static func isMessageIDForCatalogue(_ word: String) -> Bool { Parser.isMessageID(word) }
}
