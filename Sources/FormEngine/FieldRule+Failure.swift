import SignupProtocol

extension FieldRule {
    /// The prefix of the generic failure ids every rule falls back to (`field.too_short`).
    public static let genericPrefix = "field"

    /// The id a failure is sent with: the prefix-specific one (`username.too_short`) when
    /// the English catalogue has it, else the generic one of the same rule
    /// (`field.too_short`), which the built-in catalogues always have.
    public static func resolveFailureID(_ id: String, knows: (String) -> Bool) -> String {
        if knows(id) { return id }
        guard let dot = id.firstIndex(of: ".") else { return id }
        return genericPrefix + id[dot...]
    }

    /// Every failure id this rule can produce for a field with `prefix` (before the
    /// generic fallback), with the parameters each carries.
    public func failureIDs(prefix: String) -> [(id: String, params: [String])] {
        switch self {
        case .minLength, .maxLength, .maxBytes, .characters, .email, .equals, .notContaining:
            constantFailure(prefix: prefix).map { [($0.id, $0.params.map(\.name))] } ?? []
        case .username:
            [
                ("\(prefix).invalid_characters", []), ("\(prefix).invisible_characters", []), ("\(prefix).too_long", ["max"]),
                ("\(prefix).too_many_bytes", ["max"]), ("\(prefix).mixed_scripts", []), ("\(prefix).no_letter", []),
                ("\(prefix).overloaded_character", ["maxMarks", "maxCodePoints"]), ("\(prefix).bidi_order", []),
            ]
        case .phone:
            [
                ("\(prefix).invalid", []), ("\(prefix).too_short", ["min"]), ("\(prefix).too_long", ["max"]), ("\(prefix).invalid_country", []),
                ("\(prefix).impossible", []), ("\(prefix).unsupported_type", []), ("\(prefix).unavailable", []),
            ]
        case .passwordQuality: PasswordQualityVerdict.allCases.map { ("password.quality.\($0.rawValue)", $0 == .tooShort ? ["min"] : []) }
        case .available: []
        }
    }

    /// The parameters this rule sends with every failure (what an `as` message may use).
    public var parametersAlwaysSent: Set<String> {
        let failures = failureIDs(prefix: Self.genericPrefix)
        guard let first = failures.first else { return [] }
        return failures.dropFirst().reduce(Set(first.params)) { $0.intersection($1.params) }
    }

    /// Why `value` fails this rule, or nil when it passes.
    func failure(of value: String, prefix: String, valueOf: (String) -> String, configuration: FormConfiguration) -> MessageRef? {
        if let failed = fails(value, valueOf: valueOf) { return failed ? constantFailure(prefix: prefix) : nil }
        switch self {
        case .username:
            return switch configuration.usernameRule.check(value) {
            case .valid: nil
            case .invalidCharacters: MessageRef("\(prefix).invalid_characters")
            case .invisibleCharacters: MessageRef("\(prefix).invisible_characters")
            case .tooLong: MessageRef("\(prefix).too_long", [.init("max", .integer(UsernameRules.maxLength))])
            case .tooManyBytes: MessageRef("\(prefix).too_many_bytes", [.init("max", .integer(UsernameRules.maxBytes))])
            case .mixedScripts: MessageRef("\(prefix).mixed_scripts")
            case .noLetter: MessageRef("\(prefix).no_letter")
            case .overloadedCharacter:
                MessageRef(
                    "\(prefix).overloaded_character",
                    [.init("maxMarks", .integer(UsernameRules.maxMarksPerCharacter)), .init("maxCodePoints", .integer(UsernameRules.maxCodePointsPerCharacter))]
                )
            case .bidiOrder: MessageRef("\(prefix).bidi_order")
            }
        case .phone(let minDigits, let maxDigits, let region):
            guard let text = PhoneNumberText.ascii(value) else { return MessageRef("\(prefix).invalid") }
            let tooShort = MessageRef("\(prefix).too_short", [.init("min", .integer(minDigits))])
            let tooLong = MessageRef("\(prefix).too_long", [.init("max", .integer(maxDigits))])
            // Digits and punctuation only, past what any number needs: too long, not "invalid".
            guard value.utf8.count <= PhoneRules.maxInputBytes else { return tooLong }
            let verdict = configuration.phoneNumbers.parse(text, region)
            // While a number of the region is still being typed (or is not one), too few or too
            // many digits is what the person can act on (RxLoginTest's "号码长度不足"); a number
            // the numbering plan accepts is not second-guessed by the form's bounds.
            let bounded = switch verdict.status {
            case .valid: !verdict.judgedByPlan
            case .invalidCountry, .wrongType, .unavailable: false
            case .tooShort, .tooLong, .impossible, .notANumber: true
            }
            if bounded, verdict.inRegion, let digits = verdict.nationalDigits {
                if digits < minDigits { return tooShort }
                if digits > maxDigits { return tooLong }
            }
            return switch verdict.status {
            case .valid: nil
            case .tooShort: tooShort
            case .tooLong: tooLong
            case .invalidCountry: MessageRef("\(prefix).invalid_country")
            case .impossible: MessageRef("\(prefix).impossible")
            case .wrongType: MessageRef("\(prefix).unsupported_type")
            case .unavailable: MessageRef("\(prefix).unavailable")
            // Digits too few to read as any number yet (the first keystrokes).
            case .notANumber: PhoneNumberText.digits(text).isEmpty ? MessageRef("\(prefix).invalid") : tooShort
            }
        case .minLength, .maxLength, .maxBytes, .characters, .email, .equals, .notContaining,
             // Both run after the other rules pass, through an effect (FormSession).
             .passwordQuality, .available:
            return nil
        }
    }

    /// Whether `value` fails a rule whose failure always reads the same (`constantFailure`);
    /// nil for the others. A session keeps such a failure rendered (`RenderedOutcomes`).
    func fails(_ value: String, valueOf: (String) -> String) -> Bool? {
        switch self {
        case .minLength(let min):
            return value.characterCount(upTo: min) < min
        case .maxLength(let max):
            // Counting stops early: a 1 MiB value costs no more than its first max+1 characters.
            return value.characterCount(upTo: max) > max
        case .maxBytes(let max):
            return value.utf8.count > max
        case .characters(let classes):
            return !value.unicodeScalars.allSatisfy { scalar in classes.contains { $0.contains(scalar) } }
        case .email:
            return !EmailAddresses.isValid(value)
        case .equals(let field):
            return !value.hasSameUTF8(as: valueOf(field))
        case .notContaining(let field):
            let other = valueOf(field)
            guard !other.isEmpty, value.utf8.count <= 4096, other.utf8.count <= 1024 else { return false }
            return value.lowercased().contains(other.lowercased())
        case .username, .phone, .passwordQuality, .available:
            return nil
        }
    }

    /// The message of a failure that does not depend on the value (the rules `fails`
    /// answers for), before the catalogue resolves its id; nil for the other rules.
    func constantFailure(prefix: String) -> MessageRef? {
        switch self {
        case .minLength(let min): MessageRef("\(prefix).too_short", [.init("min", .integer(min))])
        case .maxLength(let max): MessageRef("\(prefix).too_long", [.init("max", .integer(max))])
        case .maxBytes(let max): MessageRef("\(prefix).too_many_bytes", [.init("max", .integer(max))])
        case .characters: MessageRef("\(prefix).invalid_characters")
        case .email: MessageRef("\(prefix).invalid")
        case .equals(let field): MessageRef("\(prefix).different", [.init("field", .string(field))])
        case .notContaining(let field): MessageRef("\(prefix).contains_other", [.init("field", .string(field))])
        case .username, .phone, .passwordQuality, .available: nil
        }
    }
}
