import SignupProtocol

/// One field's validation as signupd last stated it: the `validatedUsername`,
/// `validatedPassword` and `validatedPasswordRepeated` of the GitHubSignup view model.
public struct FieldValidation: Sendable, Equatable {
    /// The field's name, e.g. `username`.
    public var field: String
    /// `empty`, `validating` (an availability check runs), `ok` or `failed`.
    public var state: ValidationState
    /// Why, in the session's locale (empty for `empty`).
    public var message: String
    /// The message's stable id, e.g. `username.taken`; empty for `empty`.
    public var messageId: String
    /// The message's parameters, e.g. `min` for `password.too_short`.
    public var params: [LocalizedMessage.Parameter]

    /// A validation as signupd would state it.
    public init(field: String = "", state: ValidationState = .empty, message: String = "", messageId: String = "", params: [LocalizedMessage.Parameter] = []) {
        self.field = field
        self.state = state
        self.message = message
        self.messageId = messageId
        self.params = params
    }
}

/// A submit's outcome: the `signedIn` of the GitHubSignup view model.
public struct FormResult: Sendable, Equatable {
    /// Whether the signup or login succeeded.
    public var ok: Bool
    /// What happened, in the session's locale.
    public var message: String
    /// The message's stable id, e.g. `signup.done`, `login.failed`, `store.unavailable`.
    public var messageId: String
    /// The message's parameters.
    public var params: [LocalizedMessage.Parameter]
    /// The user, when ok.
    public var user: String?
    /// The login token, for an ok login (never re-sent after a locale switch).
    public var token: String?

    /// A result as signupd would state it.
    public init(ok: Bool, message: String, messageId: String = "", params: [LocalizedMessage.Parameter] = [], user: String? = nil, token: String? = nil) {
        self.ok = ok
        self.message = message
        self.messageId = messageId
        self.params = params
        self.user = user
        self.token = token
    }
}

/// One change of a form's visible state, in the order signupd made them.
public struct FormChange: Sendable, Equatable {
    /// What changed, with its new value.
    public enum Kind: Sendable, Equatable {
        /// A field's validation changed.
        case validation(FieldValidation)
        /// Whether submit is accepted now (`signupEnabled`).
        case enabled(Bool)
        /// Whether a signup or login runs (`signingIn`).
        case busy(Bool)
        /// A submit's outcome (`signedIn`).
        case result(FormResult)
        /// The session's locale changed; its messages follow again in the new language.
        case locale(String)
        /// signupd ended the session; `reason` says why when the server ended it itself.
        case closed(reason: String?)
    }

    /// The session event's `seq` (strictly increasing per session); nil for `locale` and `closed`.
    public var seq: UInt64?
    /// What changed.
    public var kind: Kind

    /// A change, with the `seq` of the event that made it.
    public init(seq: UInt64?, _ kind: Kind) {
        self.seq = seq
        self.kind = kind
    }
}
