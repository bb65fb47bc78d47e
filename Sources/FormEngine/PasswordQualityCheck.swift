import SignupProtocol

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
