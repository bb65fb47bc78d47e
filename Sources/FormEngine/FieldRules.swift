import Protocol

/// How one field is validated: each case is one rule an operator can write in a form file
/// (`FormFile` names them).
public enum FieldRule: Sendable, Codable, Equatable {
    /// At least this many grapheme clusters (extended, UAX #29).
    case minLength(Int)
    /// At most this many grapheme clusters; counting stops early.
    case maxLength(Int)
    /// At most this many bytes of UTF-8.
    case maxBytes(Int)
    /// Every code point is in one of these classes.
    case characters([CharacterClass])
    /// The configured `FormConfiguration.usernameRule` (the identity rule of usernames).
    case username
    /// A phone number as people write it (`PhoneNumberText`), judged by the configured
    /// `FormConfiguration.phoneNumbers` with `region` as the default country (nil: numbers
    /// must be international); `minDigits`/`maxDigits` bound its national significant
    /// number when it is a number of that region.
    case phone(minDigits: Int, maxDigits: Int, region: String? = nil)
    /// An e-mail address: local@domain, the domain with a dot.
    case email
    /// Must equal (byte for byte) the value of another field.
    case equals(field: String)
    /// Must not contain the value of another field (case-insensitively).
    case notContaining(field: String)
    /// The configured password-quality check (`FormConfiguration.passwordQuality`: the
    /// daemon's is libpwquality with the system's policy), told the value of `userField`
    /// so that it can refuse a password built from the user's name.
    case passwordQuality(userField: String?)
    /// A value that passes every other rule is then checked for availability (store, and
    /// the HTTP service for usernames).
    case available
}

/// Why a password fails the quality check; each maps to a message id
/// `password.quality.<rawValue>`.
public enum PasswordQualityVerdict: String, Sendable, Codable, CaseIterable {
    case tooShort = "too_short"
    case tooFewClasses = "too_few_classes"
    case tooSimple = "too_simple"
    case dictionary
    case containsUser = "contains_user"
    case palindrome
    case repeated
    case sequence
    case rejected
}

/// A password's quality verdict with its message parameters.
public struct PasswordQualityFailure: Sendable, Codable, Equatable {
    public var verdict: PasswordQualityVerdict
    public var params: [LocalizedMessage.Parameter]

    public init(_ verdict: PasswordQualityVerdict, _ params: [LocalizedMessage.Parameter] = []) {
        self.verdict = verdict
        self.params = params
    }
}

/// The password-quality check a form's `password-quality` rule applies: nil means good
/// enough. Given the password and the user's name (possibly empty). It may be slow (a
/// dictionary lookup): the engine never calls it, it asks its shell to
/// (`FormEffect.checkPassword`) and takes the answer as `FormInput.passwordChecked`.
public struct PasswordQualityCheck: Sendable {
    public let check: @Sendable (_ password: String, _ user: String) -> PasswordQualityFailure?

    public init(_ check: @escaping @Sendable (String, String) -> PasswordQualityFailure?) {
        self.check = check
    }

    /// No policy: every password passes (engine tests, the fuzzer).
    public static let none = PasswordQualityCheck { _, _ in nil }
}

/// Classes of `FieldRule.characters`.
public enum CharacterClass: String, Sendable, Codable, CaseIterable {
    /// General category L*.
    case letters
    /// General category Nd.
    case digits
    /// ASCII letters and digits only.
    case ascii
    /// Space separators (Zs).
    case space
    /// Punctuation and symbols (P*, S*).
    case punctuation

    func contains(_ scalar: Unicode.Scalar) -> Bool {
        switch self {
        case .ascii: return scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar))
        case .letters, .digits, .space, .punctuation:
            switch (self, scalar.properties.generalCategory) {
            case (.letters, .uppercaseLetter), (.letters, .lowercaseLetter), (.letters, .titlecaseLetter), (.letters, .modifierLetter), (.letters, .otherLetter): return true
            case (.digits, .decimalNumber): return true
            case (.space, .spaceSeparator): return true
            case (.punctuation, .connectorPunctuation), (.punctuation, .dashPunctuation), (.punctuation, .openPunctuation),
                (.punctuation, .closePunctuation), (.punctuation, .initialPunctuation), (.punctuation, .finalPunctuation),
                (.punctuation, .otherPunctuation), (.punctuation, .mathSymbol), (.punctuation, .currencySymbol),
                (.punctuation, .modifierSymbol), (.punctuation, .otherSymbol):
                return true
            default: return false
            }
        }
    }

    /// The Unicode general categories of the class, for `describe`.
    var categories: [String] {
        switch self {
        case .letters: ["Lu", "Ll", "Lt", "Lm", "Lo"]
        case .digits: ["Nd"]
        case .ascii: ["ASCII-alphanumeric"]
        case .space: ["Zs"]
        case .punctuation: ["Pc", "Pd", "Ps", "Pe", "Pi", "Pf", "Po", "Sm", "Sc", "Sk", "So"]
        }
    }
}

/// The syntactic username rules the engine itself knows: the daemon applies the full
/// rule (normalisation, invisible characters, UTS #39) through `FormConfiguration.usernameRule`;
/// `UsernameRule.basic` is the ICU-free approximation used where none is configured.
public enum UsernameRules {
    public static let maxLength = 39
    /// Most bytes of UTF-8 in a (normalised) username.
    public static let maxBytes = 255
    /// Most bytes of UTF-8 of a username as sent, before normalisation.
    public static let maxInputBytes = 4 * maxBytes
    /// Most combining marks (Mn Mc) in one grapheme cluster of a username.
    public static let maxMarksPerCharacter = 4
    /// Most code points in one grapheme cluster of a username.
    public static let maxCodePointsPerCharacter = 8

    /// Whether every scalar is a letter (general category L*) or a decimal digit (Nd).
    public static func hasOnlyLettersAndDigits(_ value: String) -> Bool {
        value.unicodeScalars.allSatisfy { CharacterClass.letters.contains($0) || CharacterClass.digits.contains($0) }
    }
}

/// Why a username fails the character and length rule.
public enum UsernameVerdict: Sendable, Equatable {
    case valid
    case invalidCharacters
    case invisibleCharacters
    case tooLong
    case tooManyBytes
    case mixedScripts
    /// Only modifier letters (ʼ ๆ), no other letter or digit.
    case noLetter
    /// A grapheme cluster with too many combining marks or code points.
    case overloadedCharacter
    /// Right-to-left text in an order the RFC 5893 Bidi Rule refuses.
    case bidiOrder
}

/// The username character and length rule a form applies.
public struct UsernameRule: Sendable {
    public let check: @Sendable (String) -> UsernameVerdict

    public init(_ check: @escaping @Sendable (String) -> UsernameVerdict) {
        self.check = check
    }

    /// Without ICU: bytes as typed, no default-ignorable code points, letters and digits,
    /// at most `UsernameRules.maxLength` grapheme clusters. No normalisation.
    /// Also without marks: no U+0640 ARABIC TATWEEL, a letter other than a modifier letter
    /// or a digit, at most `UsernameRules.maxCodePointsPerCharacter` code points a character.
    public static let basic = UsernameRule { value in
        guard value.utf8.count <= UsernameRules.maxBytes else { return .tooManyBytes }
        guard !value.unicodeScalars.contains(where: { $0.properties.isDefaultIgnorableCodePoint }) else { return .invisibleCharacters }
        guard UsernameRules.hasOnlyLettersAndDigits(value), !value.unicodeScalars.contains("\u{0640}") else { return .invalidCharacters }
        guard value.unicodeScalars.contains(where: { $0.properties.generalCategory != .modifierLetter }) else { return .noLetter }
        guard value.allSatisfy({ $0.unicodeScalars.count <= UsernameRules.maxCodePointsPerCharacter }) else { return .overloadedCharacter }
        guard value.count <= UsernameRules.maxLength else { return .tooLong }
        return .valid
    }
}

/// A message the engine produces, by id and parameters; rendered in the session's locale.
public struct MessageRef: Sendable, Codable, Equatable, Hashable {
    public var id: String
    public var params: [LocalizedMessage.Parameter]

    public init(_ id: String, _ params: [LocalizedMessage.Parameter] = []) {
        self.id = id
        self.params = params
    }

    public static let empty = MessageRef("")
}

/// A field's validation state and message, as the wire shows it.
public struct Validation: Sendable, Codable, Equatable {
    public var state: ValidationState
    public var message: MessageRef

    public init(_ state: ValidationState, _ message: MessageRef) {
        self.state = state
        self.message = message
    }

    public static let empty = Validation(.empty, .empty)
}

extension FieldDefinition {
    /// The validation that follows from the values alone. For a field with an
    /// availability check, `validating` here means "valid, check it".
    /// `valueOf` reads another field's value by name.
    func evaluate(_ value: String, valueOf: (String) -> String, configuration: FormConfiguration) -> Validation {
        if value.isEmpty { return .empty }
        let prefix = messagePrefix
        for spec in rules {
            if let failure = spec.rule.failure(of: value, prefix: prefix, valueOf: valueOf, configuration: configuration) {
                if let id = spec.messageID { return Validation(.failed, MessageRef(id, failure.params)) }
                let id = FieldRule.resolveFailureID(failure.id, knows: configuration.catalogues.knows)
                return Validation(.failed, MessageRef(id, failure.params))
            }
        }
        return checksAvailability || checksQuality ? Validation(.validating, MessageRef("\(prefix).checking")) : Validation(.ok, MessageRef(okMessageID))
    }
}

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
        case .minLength: [("\(prefix).too_short", ["min"])]
        case .maxLength: [("\(prefix).too_long", ["max"])]
        case .maxBytes: [("\(prefix).too_many_bytes", ["max"])]
        case .characters: [("\(prefix).invalid_characters", [])]
        case .username:
            [
                ("\(prefix).invalid_characters", []), ("\(prefix).invisible_characters", []), ("\(prefix).too_long", ["max"]),
                ("\(prefix).too_many_bytes", ["max"]), ("\(prefix).mixed_scripts", []), ("\(prefix).no_letter", []),
                ("\(prefix).overloaded_character", ["maxMarks", "maxCodePoints"]), ("\(prefix).bidi_order", []),
            ]
        case .phone:
            [
                ("\(prefix).invalid", []), ("\(prefix).too_short", ["min"]), ("\(prefix).too_long", ["max"]), ("\(prefix).invalid_country", []),
                ("\(prefix).impossible", []), ("\(prefix).unsupported_type", []),
            ]
        case .email: [("\(prefix).invalid", [])]
        case .equals: [("\(prefix).different", ["field"])]
        case .notContaining: [("\(prefix).contains_other", ["field"])]
        case .passwordQuality: PasswordQualityVerdict.allCases.map { ("password.quality.\($0.rawValue)", $0 == .tooShort ? ["min"] : []) }
        case .available: []
        }
    }

    /// Why `value` fails this rule, or nil when it passes.
    func failure(of value: String, prefix: String, valueOf: (String) -> String, configuration: FormConfiguration) -> MessageRef? {
        switch self {
        case .minLength(let min):
            var count = 0
            for _ in value {
                count += 1
                if count >= min { return nil }
            }
            return MessageRef("\(prefix).too_short", [.init("min", .integer(min))])
        case .maxLength(let max):
            // Counting stops early: a 1 MiB value costs no more than its first max+1 characters.
            var count = 0
            for _ in value {
                count += 1
                if count > max { return MessageRef("\(prefix).too_long", [.init("max", .integer(max))]) }
            }
            return nil
        case .maxBytes(let max):
            return value.utf8.count > max ? MessageRef("\(prefix).too_many_bytes", [.init("max", .integer(max))]) : nil
        case .characters(let classes):
            let ok = value.unicodeScalars.allSatisfy { scalar in classes.contains { $0.contains(scalar) } }
            return ok ? nil : MessageRef("\(prefix).invalid_characters")
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
            case .invalidCountry, .wrongType: false
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
            // Digits too few to read as any number yet (the first keystrokes).
            case .notANumber: PhoneNumberText.digits(text).isEmpty ? MessageRef("\(prefix).invalid") : tooShort
            }
        case .email:
            return EmailAddresses.isValid(value) ? nil : MessageRef("\(prefix).invalid")
        case .equals(let field):
            return value.utf8.elementsEqual(valueOf(field).utf8) ? nil : MessageRef("\(prefix).different", [.init("field", .string(field))])
        case .notContaining(let field):
            let other = valueOf(field)
            guard !other.isEmpty, value.utf8.count <= 4096, other.utf8.count <= 1024 else { return nil }
            return value.lowercased().contains(other.lowercased()) ? MessageRef("\(prefix).contains_other", [.init("field", .string(field))]) : nil
        case .passwordQuality, .available:
            // Both run after the other rules pass, through an effect (FormSession).
            return nil
        }
    }
}

/// The e-mail rule: one `@`, a local part, a domain of dot-separated labels.
public enum EmailAddresses {
    public static func isValid(_ value: String) -> Bool {
        guard value.utf8.count <= 254 else { return false }
        let parts = value.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, parts[0].utf8.count <= 64 else { return false }
        guard !value.unicodeScalars.contains(where: { $0.properties.isWhitespace || $0.value < 0x20 }) else { return false }
        let labels = parts[1].split(separator: ".", omittingEmptySubsequences: false)
        return labels.count >= 2 && labels.allSatisfy { !$0.isEmpty }
    }
}

extension FieldDefinition {
    /// The rules as `describe` states them: what the engine itself knows. The daemon adds
    /// the normalisation and identity of usernames (`UsernameRule`'s).
    public var rulesDescription: FieldRulesDescription {
        var description = FieldRulesDescription()
        for spec in rules {
            switch spec.rule {
            case .minLength(let n): description.minCharacters = n
            case .maxLength(let n): description.maxCharacters = n
            case .maxBytes(let n): description.maxBytes = n
            case .characters(let classes): description.allowedCategories = classes.flatMap(\.categories)
            case .username:
                description.maxCharacters = UsernameRules.maxLength
                description.maxBytes = UsernameRules.maxBytes
                description.allowedCategories = ["Lu", "Ll", "Lt", "Lm", "Lo", "Nd"]
                description.refusedProperties = ["Default_Ignorable_Code_Point"]
                description.refusedCodePoints = ["U+0640"]
                description.requiredCategories = ["Lu", "Ll", "Lt", "Lo", "Nd"]
                description.maxCodePointsPerCharacter = UsernameRules.maxCodePointsPerCharacter
            case .phone(let minDigits, let maxDigits, let region):
                description.minDigits = minDigits
                description.maxDigits = maxDigits
                description.region = region
            case .email: description.email = true
            case .equals(let field): description.equalsField = field
            case .notContaining(let field): description.notContainingField = field
            case .passwordQuality: description.passwordQuality = "libpwquality"
            case .available: break
            }
        }
        if description.minCharacters == nil, !rules.contains(where: { if case .equals = $0.rule { true } else { false } }) {
            description.minCharacters = 1
        }
        return description
    }
}
