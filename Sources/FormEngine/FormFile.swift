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
        let (form, problems) = parseRecording(text, file: file, knowsMessage: knowsMessage)
        if let first = problems.first { throw first }
        return form!
    }

    /// Parses and checks one form, reporting every problem in file order (like a compiler).
    public static func parseAll(_ text: String, file: String, knowsMessage: @escaping (String) -> Bool = { _ in true }) -> Result<FormDefinition, ConfigErrors> {
        let (form, problems) = parseRecording(text, file: file, knowsMessage: knowsMessage)
        if let form, problems.isEmpty { return .success(form) }
        return .failure(ConfigErrors(errors: ConfigErrors.inFileOrder(problems)))
    }

    /// The form, and the problems in the order they were found (the first is the cause).
    private static func parseRecording(_ text: String, file: String, knowsMessage: @escaping (String) -> Bool) -> (FormDefinition?, [ConfigError]) {
        var parser = Parser(file: file, knowsMessage: knowsMessage)
        let (lines, lineProblems) = ConfigLines.parseAll(text, file: file)
        parser.problems = lineProblems
        for line in lines {
            do { try parser.take(line) } catch {
                parser.problems.append(error)
                // The keys under a broken section header are not checked against another.
                if case .section = line.content { parser.section = .broken }
            }
        }
        let form = parser.finish()
        return (parser.problems.isEmpty ? form : nil, parser.problems)
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
        var problems: [ConfigError] = []

        /// `broken`: after a section header with an error, whose keys are skipped.
        enum Section { case none, form, field, broken }

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
                case .broken: break
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
                if let reason = FormFile.notAFailure(id) {
                    throw line.error(file, "\"as \(id)\": \(reason); a rule's message must say why a value fails (e.g. password.short, or an id of your own under custom.)", offset: at)
                }
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
                // The last word is the default region when it is two capital letters.
                let region: String? = arguments.last.flatMap { last in
                    last.0.count == 2 && last.0.unicodeScalars.allSatisfy { ("A"..."Z").contains($0) } ? String(last.0) : nil
                }
                let digitWords = arguments.count - (region == nil ? 0 : 1)
                try count(1...(region == nil ? 2 : 3), "phone MIN-DIGITS [MAX-DIGITS] [REGION]")
                guard digitWords >= 1 else { throw line.error(file, "usage: rule = phone MIN-DIGITS [MAX-DIGITS] [REGION]") }
                let minimum = try number(1, 1...30)
                let maximum = digitWords == 2 ? try number(2, 1...30) : 15
                guard minimum <= maximum else { throw line.error(file, "phone: MIN-DIGITS \(minimum) is more than MAX-DIGITS \(maximum)", offset: words[1].1) }
                rule = .phone(minDigits: minimum, maxDigits: maximum, region: region)
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

        /// Checks the whole form. Every problem is recorded in `problems` (one per field or
        /// key at most, so that one mistake does not hide the next); nil when there were any.
        mutating func finish() -> FormDefinition? {
            guard let header = formHeader else {
                // After a broken header, its own error says it.
                if problems.isEmpty { problems.append(ConfigError(file: file, line: 1, column: 1, message: "no [form] section")) }
                return nil
            }
            func required(_ key: String) throws(ConfigError) -> (String, ConfigLine) {
                guard let value = formValues[key] else { throw header.error(file, "[form] needs \"\(key) = ...\"", atValue: false) }
                return value
            }
            func attempt<T>(_ body: () throws(ConfigError) -> T) -> T? {
                do { return try body() } catch {
                    problems.append(error)
                    return nil
                }
            }
            let name = attempt { () throws(ConfigError) -> String in
                let (name, nameLine) = try required("name")
                guard name.utf8.count <= 64, name.unicodeScalars.allSatisfy({ ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "-" }),
                    name.unicodeScalars.first.map({ ("a"..."z").contains($0) }) == true
                else { throw nameLine.error(file, "form name \"\(name)\" must be lower-case letters, digits and -, starting with a letter") }
                return name
            }
            let action = attempt { () throws(ConfigError) -> SubmitAction in
                let (actionText, actionLine) = try required("action")
                guard let action = SubmitAction(rawValue: actionText) else { throw actionLine.error(file, "unknown action \"\(actionText)\"; known: signup, login") }
                return action
            }
            _ = attempt { () throws(ConfigError) in _ = try required("submit") }
            if fields.isEmpty { problems.append(header.error(file, "form \"\(name ?? "?")\" has no [field NAME] sections", atValue: false)) }
            // The identity as written, when it names a field: rules that depend on it are
            // only checked against a real one (a missing identity is its own error).
            let identityName = formValues["identity"].map(\.0).flatMap { value in fields.contains { $0.name == value } ? value : nil }

            var definitions: [FieldDefinition] = []
            var complete = true
            for field in fields {
                let definition = attempt { () throws(ConfigError) -> FieldDefinition in
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
                        case .available where identityName != nil && identityName != field.name:
                            throw line.error(file, "only the identity field (identity = \(identityName ?? "?")) can be checked for availability")
                        default: break
                        }
                    }
                    for (spec, line) in field.rules where spec.messageID == nil {
                        for (id, _) in spec.rule.failureIDs(prefix: kind.messagePrefix) where !knowsMessage(FieldRule.resolveFailureID(id, knows: knowsMessage)) {
                            throw line.error(file, "this rule can fail with message id \"\(id)\", which the en catalogue does not have; add it (or \"\(FieldRule.resolveFailureID(id, knows: { _ in false }))\") to messages.d/en.messages, or write \"as ID\"")
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
                    return FieldDefinition(name: field.name, kind: kind, labels: LocalizedText(english, labels), rules: field.rules.map(\.0), okMessageID: field.ok)
                }
                if let definition { definitions.append(definition) } else { complete = false }
            }
            let identity = attempt { () throws(ConfigError) -> Int? in
                let (identityName, identityLine) = try required("identity")
                guard let identity = definitions.firstIndex(where: { $0.name == identityName }) else {
                    // A field with its own error is not reported twice.
                    if !complete, fields.contains(where: { $0.name == identityName }) { return nil }
                    throw identityLine.error(file, "identity names no field: \"\(identityName)\"; fields: \(fields.map(\.name).joined(separator: ", "))")
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
                return identity
            }
            let secret = attempt { () throws(ConfigError) -> Int? in
                let (secretName, secretLine) = try required("secret")
                guard let secret = definitions.firstIndex(where: { $0.name == secretName }) else {
                    if !complete, fields.contains(where: { $0.name == secretName }) { return nil }
                    throw secretLine.error(file, "secret names no field: \"\(secretName)\"; fields: \(fields.map(\.name).joined(separator: ", "))")
                }
                guard definitions[secret].kind == .secret else { throw secretLine.error(file, "the secret field \"\(secretName)\" must be of kind secret") }
                let bounded = definitions[secret].rules.contains { if case .maxBytes = $0.rule { true } else { false } }
                guard bounded else { throw secretLine.error(file, "the secret field \"\(secretName)\" needs \"rule = max-bytes N\" (at most 65536): passwords are hashed") }
                return secret
            }
            guard problems.isEmpty, let name, let action, let identity = identity ?? nil, let secret = secret ?? nil else { return nil }

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
        switch parseAll(text, locale: locale, file: file) {
        case .success(let catalogue): return catalogue
        case .failure(let errors): throw errors.errors[0]
        }
    }

    /// Every problem of the file, in file order.
    public static func parseAll(_ text: String, locale: String, file: String) -> Result<MessageCatalogue, ConfigErrors> {
        guard LocaleTag.isWellFormed(locale) else {
            return .failure(ConfigErrors(errors: [ConfigError(file: file, line: 1, column: 1, message: "the file name must be a BCP 47 tag, e.g. zh-CN.messages, not \"\(locale)\"")]))
        }
        var texts: [String: (String, Int)] = [:]
        let (lines, lineProblems) = ConfigLines.parseAll(text, file: file, sections: false)
        var problems = lineProblems
        for line in lines {
            do throws(ConfigError) {
                switch line.content {
                case .section: throw line.error(file, "a message file has no sections: write \"message.id = text\"")
                case .assignment(let key, let value):
                    guard FormFile.isMessageIDForCatalogue(key) else { throw line.error(file, "message id \"\(key)\" must be dot-separated lower-case words", atValue: false) }
                    if let previous = texts[key] { throw line.error(file, "\"\(key)\" set twice (first on line \(previous.1))", atValue: false) }
                    guard !value.isEmpty else { throw line.error(file, "\"\(key)\" needs a text") }
                    if let (offset, problem) = MessagePlaceholders.problem(in: value, allowed: MessagePlaceholders.parameters(of: key)) {
                        throw line.error(file, "\"\(key)\": \(problem)", offset: offset)
                    }
                    texts[key] = (value, line.line)
                }
            } catch { problems.append(error) }
        }
        guard problems.isEmpty else { return .failure(ConfigErrors(errors: ConfigErrors.inFileOrder(problems))) }
        return .success(MessageCatalogue(locale: locale.replacing("_", with: "-"), texts: texts.mapValues(\.0)))
    }
}

extension FormFile {
    static func isMessageIDForCatalogue(_ word: String) -> Bool { Parser.isMessageID(word) }

    /// Why `id` cannot be a rule's failure message, or nil when it can: success and
    /// progress ids (`*.valid`, `*.done`, `*.checking`…) and the ids of results.
    static func notAFailure(_ id: String) -> String? {
        let last = id.split(separator: ".").last.map(String.init) ?? id
        let first = id.split(separator: ".").first.map(String.init) ?? id
        if ["valid", "ok", "done", "checking", "available", "acceptable", "entered"].contains(last) || ["password.repeated", "password.match"].contains(id) {
            return "\"\(last)\" ids say a value is good or being checked"
        }
        if ["taken", "too_similar", "invalid_credentials", "rate_limited", "unavailable", "unreachable"].contains(last)
            || ["signup", "login", "store", "availability"].contains(first)
        {
            return "it is the message of a submit or availability result"
        }
        return nil
    }
}

/// The `{name}` placeholders a message text may use: the parameters its id is sent with.
public enum MessagePlaceholders {
    /// The parameters of `id`: those of the rules that produce it (any field kind's prefix,
    /// or the generic `field.`), `min` for `password.quality.too_short`, none for success,
    /// progress and result ids; any other id can only be a rule's `as` message and may use
    /// the parameters rules send: `min`, `max` (length rules) and `field` (equals,
    /// not-containing).
    public static func parameters(of id: String) -> Set<String> {
        guard let names = failureParameters[id] else { return FormFile.notAFailure(id) == nil ? ["min", "max", "field"] : [] }
        return names
    }

    /// Every id a rule can fail with (for any field kind's prefix, and the generic `field.`),
    /// with the parameters it is sent with.
    public static let failureParameters: [String: Set<String>] = {
        var parameters: [String: Set<String>] = [:]
        let rules: [FieldRule] = [
            .minLength(1), .maxLength(1), .maxBytes(1), .characters([]), .username, .phone(minDigits: 1, maxDigits: 1, region: nil), .email,
            .equals(field: "x"), .notContaining(field: "x"), .passwordQuality(userField: nil),
        ]
        for prefix in FieldKind.allCases.map(\.messagePrefix) + [FieldRule.genericPrefix] {
            for rule in rules {
                for (id, params) in rule.failureIDs(prefix: prefix) { parameters[id, default: []].formUnion(params) }
            }
        }
        return parameters
    }()

    /// The first problem of `text`'s placeholders (scalar offset, message), or nil.
    public static func problem(in text: String, allowed: Set<String>) -> (Int, String)? {
        let scalars = Array(text.unicodeScalars)
        var index = 0
        while index < scalars.count {
            if scalars[index] == "}" { return (index, "\"}\" without \"{\"") }
            guard scalars[index] == "{" else {
                index += 1
                continue
            }
            guard let close = scalars[(index + 1)...].firstIndex(where: { $0 == "}" || $0 == "{" }), scalars[close] == "}" else {
                return (index, "unclosed \"{\"")
            }
            let name = String(String.UnicodeScalarView(scalars[(index + 1)..<close]))
            guard allowed.contains(name) else {
                let list = allowed.isEmpty ? "this message has no parameters" : "its parameters: " + allowed.sorted().map { "{\($0)}" }.joined(separator: ", ")
                return (index, "unknown parameter {\(name)}; \(list)")
            }
            index = close + 1
        }
        return nil
    }
}
