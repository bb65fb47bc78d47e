import SignupProtocol

/// The `{name}` placeholders a message text may use: the parameters its id is sent with.
public enum MessagePlaceholders {
    /// The parameters of `id`: those of the rules that produce it (any field kind's prefix,
    /// or the generic `field.`), `min` for `password.quality.too_short`, none for success,
    /// progress and result ids (`note` for `signup.paused_note`); any other id can only be a rule's `as` message and may use
    /// the parameters rules send: `min`, `max` (length rules) and `field` (equals,
    /// not-containing).
    public static func parameters(of id: String) -> Set<String> {
        // The operator's words when sign-up is paused (`SignupPause.message`).
        if id == "signup.paused_note" { return ["note"] }
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

    /// What a text's braces are, in order, by scalar offset: a placeholder's name, a `}`
    /// with no `{`, or an unclosed `{` (the last: what follows it is not a placeholder).
    private enum Brace {
        case placeholder(String)
        case strayClose
        case unclosed
    }

    private static func braces(in text: String) -> [(offset: Int, brace: Brace)] {
        let scalars = Array(text.unicodeScalars)
        var found: [(offset: Int, brace: Brace)] = []
        var index = 0
        while index < scalars.count {
            if scalars[index] == "}" { found.append((index, .strayClose)) }
            guard scalars[index] == "{" else {
                index += 1
                continue
            }
            guard let close = scalars[(index + 1)...].firstIndex(where: { $0 == "}" || $0 == "{" }), scalars[close] == "}" else {
                found.append((index, .unclosed))
                break
            }
            found.append((index, .placeholder(String(String.UnicodeScalarView(scalars[(index + 1)..<close])))))
            index = close + 1
        }
        return found
    }

    /// The names of the well-formed placeholders `text` uses (its faults are `problems`').
    public static func names(in text: String) -> Set<String> {
        Set(braces(in: text).compactMap { if case .placeholder(let name) = $0.brace { name } else { nil } })
    }

    /// Every problem of `text`'s placeholders, in order (scalar offset, message): a text
    /// with two faults names both, so one reload shows all there is to mend. An unclosed
    /// `{` ends the check (what follows it is not a placeholder).
    public static func problems(in text: String, allowed: Set<String>) -> [(offset: Int, message: String)] {
        braces(in: text).compactMap { offset, brace in
            switch brace {
            case .strayClose: return (offset, "\"}\" without \"{\"")
            case .unclosed: return (offset, "unclosed \"{\"")
            case .placeholder(let name) where allowed.contains(name): return nil
            case .placeholder(let name):
                let list = allowed.isEmpty ? "this message has no parameters" : "its parameters: " + allowed.sorted().map { "{\($0)}" }.joined(separator: ", ")
                return (offset, "unknown parameter {\(name)}; \(list)")
            }
        }
    }
}
