import SignupProtocol

/// One `rule =` line of a form file.
extension FormFile.Parser {
    mutating func parseRule(_ text: String, _ line: ConfigLine) throws(ConfigError) -> RuleSpec {
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
        var messageIDAt = 0
        if words.count >= 2, words[words.count - 2].0 == "as" {
            let (id, at) = words.removeLast()
            let (_, asAt) = words.removeLast()
            // Nothing before `as`: said before anything about the id (an unknown id's advice
            // led to this error next: helper-48).
            if words.isEmpty {
                throw line.error(file, "a rule names what it checks before \"as\" (e.g. rule = min-length 8 as password.short)", offset: asAt)
            }
            try checkMessageID(id, line, offset: at)
            if let reason = FormFile.notAFailure(id) {
                throw line.error(file, "\"as \(id)\": \(reason); a rule's message must say why a value fails (e.g. password.short, or an id of your own under custom.)", offset: at)
            }
            messageID = id
            messageIDAt = at
        }
        // Nothing at all: said so (it read past the end: the fuzzer).
        guard let (name, _) = words.first else {
            throw line.error(file, "usage: rule = NAME [ARGUMENTS] [as MESSAGE-ID]; known: \(FormFile.ruleNames.joined(separator: ", "))")
        }
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
        if let messageID { warnings += placeholderWarnings(of: messageID, sent: rule.parametersAlwaysSent, line, offset: messageIDAt, sender: "this rule") }
        return RuleSpec(rule, messageID: messageID)
    }

    /// An `as` message's texts should use only what its rule sends with every failure: any
    /// other `{name}` reaches users as written (`min-length 3 as username.too_long` showed
    /// "at most {max} characters": helper-49). A warning, not an error: forms that loaded
    /// before this check must not stop a start after an upgrade (their last good copy would
    /// be refused too).
    func placeholderWarnings(of id: String, sent: Set<String>, _ line: ConfigLine, offset: Int, sender: String) -> [ConfigError] {
        let uses = placeholderUses(id).filter { !$0.names.isSubset(of: sent) }
        guard !uses.isEmpty else { return [] }
        let unsent = uses.reduce(Set<String>()) { $0.union($1.names) }.subtracting(sent)
        let braced = { (names: Set<String>) in names.sorted().map { "{\($0)}" }.joined(separator: ", ") }
        let texts = uses.count == 1 ? "its \(uses[0].locale) text" : "its \(uses.map(\.locale).joined(separator: ", ")) texts"
        let sends = sent.isEmpty ? "it sends none" : "it sends " + braced(sent)
        return [line.error(file, "warning: \"\(id)\" uses \(braced(unsent)) (\(texts)), which \(sender) does not send (\(sends)); users see it as written", offset: offset)]
    }

    /// Checks the whole form. Every problem is recorded in `problems` (one per field or
    /// key at most, so that one mistake does not hide the next); nil when there were any.
}
