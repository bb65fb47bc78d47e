import Protocol

/// The syntactic username rules: Unicode letters and decimal digits only, bounded length.
/// The daemon applies the full rule (normalisation, invisible characters, UTS #39 mixed
/// scripts) through `FormConfiguration.usernameRule`; this is the engine's own, ICU-free
/// approximation, used where no rule is configured (engine tests, the fuzzer).
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
        value.unicodeScalars.allSatisfy { scalar in
            switch scalar.properties.generalCategory {
            case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter, .decimalNumber:
                true
            default:
                false
            }
        }
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

/// The new-password length rules, counted in grapheme clusters, and a byte cap on every
/// password field.
public enum PasswordRules {
    public static let minLength = 5
    public static let maxLength = 1024
    /// Most bytes of UTF-8 in any password field (new, repeated or entered at login).
    public static let maxBytes = 4096
}

/// A field's validation state and message, as the wire shows it.
public struct Validation: Sendable, Codable, Equatable {
    public var state: ValidationState
    public var message: String

    public init(_ state: ValidationState, _ message: String) {
        self.state = state
        self.message = message
    }

    public static let empty = Validation(.empty, "")
}

extension FieldRule {
    /// The validation that follows from the values alone. For a username with an
    /// availability check, `ok` here means "syntactically valid, check it".
    /// `valueOf` reads another field's value by name (for `repeats`).
    func evaluate(_ value: String, valueOf: (String) -> String, configuration: FormConfiguration) -> Validation {
        let messages = configuration.messages
        if value.isEmpty { return .empty }
        switch self {
        case .username(let availabilityCheck):
            let failure: String? = switch configuration.usernameRule.check(value) {
            case .valid: nil
            case .invalidCharacters: messages.usernameInvalidCharacters
            case .invisibleCharacters: messages.usernameInvisibleCharacters
            case .tooLong: messages.usernameTooLong
            case .tooManyBytes: messages.usernameTooManyBytes
            case .mixedScripts: messages.usernameMixedScripts
            case .noLetter: messages.usernameNoLetter
            case .overloadedCharacter: messages.usernameOverloadedCharacter
            case .bidiOrder: messages.usernameBidiOrder
            }
            if let failure { return Validation(.failed, failure) }
            return availabilityCheck ? Validation(.validating, messages.usernameChecking) : Validation(.ok, messages.usernameValid)
        case .newPassword:
            guard value.utf8.count <= PasswordRules.maxBytes else { return Validation(.failed, messages.passwordTooManyBytes) }
            // Counting stops early: a 1 MiB value costs no more than its first 1025 characters.
            var count = 0
            for _ in value {
                count += 1
                if count > PasswordRules.maxLength { return Validation(.failed, messages.passwordTooLong) }
            }
            return count < PasswordRules.minLength ? Validation(.failed, messages.passwordTooShort) : Validation(.ok, messages.passwordAcceptable)
        case .repeats(let other):
            return value.utf8.elementsEqual(valueOf(other).utf8) ? Validation(.ok, messages.passwordRepeated) : Validation(.failed, messages.passwordDifferent)
        case .required:
            guard value.utf8.count <= PasswordRules.maxBytes else { return Validation(.failed, messages.passwordTooManyBytes) }
            return Validation(.ok, messages.passwordEntered)
        }
    }
}

extension FieldRule {
    /// The rule as `describe` states it: what the engine itself knows. The daemon adds
    /// the normalisation and identity of usernames (`UsernameRule`'s).
    public var description: FieldRulesDescription {
        switch self {
        case .username:
            FieldRulesDescription(
                maxCharacters: UsernameRules.maxLength, maxBytes: UsernameRules.maxBytes,
                allowedCategories: ["Lu", "Ll", "Lt", "Lm", "Lo", "Nd"], refusedProperties: ["Default_Ignorable_Code_Point"],
                refusedCodePoints: ["U+0640"], requiredCategories: ["Lu", "Ll", "Lt", "Lo", "Nd"],
                maxCodePointsPerCharacter: UsernameRules.maxCodePointsPerCharacter
            )
        case .newPassword:
            FieldRulesDescription(minCharacters: PasswordRules.minLength, maxCharacters: PasswordRules.maxLength, maxBytes: PasswordRules.maxBytes)
        case .repeats(let field):
            FieldRulesDescription(equalsField: field)
        case .required:
            FieldRulesDescription(minCharacters: 1, maxBytes: PasswordRules.maxBytes)
        }
    }
}
