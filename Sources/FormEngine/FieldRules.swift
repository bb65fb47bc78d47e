import Protocol

/// The syntactic username rules: Unicode letters and decimal digits only, bounded length.
public enum UsernameRules {
    public static let maxLength = 39

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

/// The new-password length rules, counted in grapheme clusters.
public enum PasswordRules {
    public static let minLength = 5
    public static let maxLength = 1024
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
    func evaluate(_ value: String, valueOf: (String) -> String, messages: FormMessages) -> Validation {
        if value.isEmpty { return .empty }
        switch self {
        case .username(let availabilityCheck):
            guard UsernameRules.hasOnlyLettersAndDigits(value) else { return Validation(.failed, messages.usernameInvalidCharacters) }
            guard value.count <= UsernameRules.maxLength else { return Validation(.failed, messages.usernameTooLong) }
            return availabilityCheck ? Validation(.validating, messages.usernameChecking) : Validation(.ok, messages.usernameValid)
        case .newPassword:
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
            return Validation(.ok, messages.passwordEntered)
        }
    }
}
