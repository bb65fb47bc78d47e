import SignupProtocol

/// A point on the daemon's monotonic clock. The engine never reads a clock: time comes
/// in with every input, so tests drive it with a virtual one.
public struct Moment: Sendable, Codable, Comparable, Hashable {
    public var nanoseconds: Int64

    public init(nanoseconds: Int64) {
        self.nanoseconds = nanoseconds
    }

    public static func < (lhs: Moment, rhs: Moment) -> Bool { lhs.nanoseconds < rhs.nanoseconds }

    public static func + (lhs: Moment, rhs: Duration) -> Moment {
        Moment(nanoseconds: lhs.nanoseconds + rhs.nanoseconds)
    }

    public static let zero = Moment(nanoseconds: 0)
}

extension Duration {
    /// Whole nanoseconds (truncated): the one conversion for clocks and timers that count them.
    public var nanoseconds: Int64 {
        components.seconds * 1_000_000_000 + components.attoseconds / 1_000_000_000
    }
}

/// An identity as a submit or an availability check names it: its kind and the value typed.
public struct IdentityValue: Sendable, Codable, Equatable, Hashable {
    public var kind: IdentityKind
    public var value: String
    /// A phone number's default region (the form's phone rule's), nil otherwise.
    public var region: String?

    public init(_ kind: IdentityKind, _ value: String, region: String? = nil) {
        self.kind = kind
        self.value = value
        self.region = region
    }
}

/// What the availability check of an identity found.
public enum Availability: Sendable, Codable, Equatable {
    case available
    case taken
    /// Confusable (a shared similarity key: UTS #39 skeleton or look-alike table) with an existing account's name.
    case tooSimilar
    /// The store or the HTTP service failed or did not answer in time.
    case unreachable
}

/// How a signup or login the engine asked for ended.
public enum SubmitOutcome: Sendable, Codable, Equatable {
    case signedUp(user: String)
    case loggedIn(user: String, token: String)
    /// The signup lost the race for the name (the store's unique index said so).
    case usernameTaken
    /// The signup lost the race to a confusable name.
    case usernameTooSimilar
    case invalidCredentials
    case rateLimited
    /// The account store failed; nothing was written.
    case storeUnavailable
    /// Sign-up is paused by the operator (`signupctl signups pause`); nothing was written.
    /// `note`: the operator's words, shown as they are.
    case signupsPaused(note: String?)
}

/// One input to a form session.
public enum FormInput: Sendable, Equatable {
    case set(field: String, value: String)
    case submit
    /// Switch the session's locale (a BCP 47 tag; resolved against the catalogues). The
    /// step carries the whole snapshot again, rendered in the new locale.
    case setLocale(String)
    /// The answer to the check the engine started with `FormEffect.startCheck(id:...)`.
    case availability(check: UInt64, Availability)
    case submitCompleted(SubmitOutcome)
    /// The answer to `FormEffect.checkPassword(id:...)`: nil when the password is good enough.
    case passwordChecked(check: UInt64, PasswordQualityFailure?)
    /// Time has passed: expires a check whose deadline is due.
    case tick
    /// The operator paused sign-up (`note`: their words, if any) or resumed it (nil). Only
    /// signup forms change: submit is disabled and every connection is told with a
    /// `result` (`signup.paused`); resuming enables submit again when the form is ready.
    case signupsPaused(SignupPause?)
}

/// Work the engine asks its shell to do.
public enum FormEffect: Sendable, Equatable {
    /// Check whether `identity` is available; answer with `.availability(check: id, ...)`.
    /// The engine expires it itself at `deadline` (on a `.tick` at or after it).
    case startCheck(id: UInt64, identity: IdentityValue, deadline: Moment)
    /// Check a password with `FormConfiguration.passwordQuality` (off the caller's thread:
    /// it may read a dictionary); answer with `.passwordChecked(check: id, ...)`. A newer
    /// value makes the answer stale, and it is ignored.
    case checkPassword(id: UInt64, password: String, user: String)
    /// The check's answer is no longer wanted; stop it if possible.
    case cancelCheck(id: UInt64)
    /// Run the form's submit action with the values as they were at submit.
    case submit(SubmitAction, identity: IdentityValue, password: String)

    /// A due time the shell must feed back as `.tick`, if any.
    public var deadline: Moment? {
        if case .startCheck(_, _, let deadline) = self { return deadline }
        return nil
    }
}

/// Why an input was refused. The session is unchanged.
public enum FormError: Error, Sendable, Equatable {
    case unknownField(String)
    /// `set` with a value of more UTF-8 bytes than the field takes
    /// (`FormDefinition.inputByteCap`); the field keeps its value.
    case valueTooLong(field: String, maxBytes: Int)
    case notReady
    case finished
}

/// What one input produced: events to send, in order, and effects to perform.
public struct FormStep: Sendable, Equatable {
    public var events: [SessionEvent] = []
    public var effects: [FormEffect] = []

    public init(events: [SessionEvent] = [], effects: [FormEffect] = []) {
        self.events = events
        self.effects = effects
    }
}

/// Tunables of the engine.
public struct FormConfiguration: Sendable {
    /// How long an availability check may take before it counts as "Error contacting server".
    public var checkTimeout: Duration
    /// The texts of every message id, by locale.
    public var catalogues: MessageCatalogues
    /// The username character and length rule (the daemon's is ICU's, see UsernameIdentity).
    public var usernameRule: UsernameRule
    /// What `password-quality` rules apply (the daemon's is libpwquality's).
    public var passwordQuality: PasswordQualityCheck
    /// How phone numbers are parsed (the daemon's is libphonenumber's).
    public var phoneNumbers: PhoneNumberRule

    public init(
        checkTimeout: Duration = .seconds(3), catalogues: MessageCatalogues = .builtin, usernameRule: UsernameRule = .basic,
        passwordQuality: PasswordQualityCheck = .none, phoneNumbers: PhoneNumberRule = .basic
    ) {
        self.checkTimeout = checkTimeout
        self.catalogues = catalogues
        self.usernameRule = usernameRule
        self.passwordQuality = passwordQuality
        self.phoneNumbers = phoneNumbers
    }
}

/// Sign-up paused by the operator, as a form sees it.
public struct SignupPause: Sendable, Equatable, Codable {
    /// The operator's words, shown as they are (`signupctl signups pause --message`).
    public var note: String?

    public init(note: String?) {
        self.note = note
    }

    /// `signup.paused`, or `signup.paused_note` with the operator's words as `{note}`.
    public var message: MessageRef {
        guard let note, !note.isEmpty else { return MessageRef("signup.paused") }
        return MessageRef("signup.paused_note", [.init("note", .string(note))])
    }
}
