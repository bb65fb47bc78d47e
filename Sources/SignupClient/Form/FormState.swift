import SignupProtocol

/// A client's picture of one form session, kept up to date from signupd's events: a plain
/// value with no I/O, shared by ``SignupForm`` and any client that reads events itself.
///
/// Events of other sessions, and session events no newer than the last one applied (by
/// `seq`), change nothing: a late or repeated answer is dropped, as `flatMapLatest` would
/// drop a superseded one.
public struct FormState: Sendable, Equatable {
    /// The form, as `describe` gave it.
    public let form: FormDescription
    /// The session id; empty until one is opened or attached.
    public var session = ""
    /// The locale the daemon resolved for the session, if it named one.
    public var locale: String?
    /// Each field's last validation, by name.
    public var fields: [String: FieldValidation] = [:]
    /// Whether submit is accepted now.
    public var enabled = false
    /// Whether a signup or login runs.
    public var busy = false
    /// The last submit's outcome.
    public var result: FormResult?
    /// Sign-up paused by the operator (`signup.paused`, `signup.paused_note`): said with a
    /// `result` when it happens or in the snapshot, kept until `enabled` turns true again —
    /// unlike `result`, which a client clears when the user edits.
    public private(set) var paused: FormResult?
    /// The last session event's `seq` applied.
    public private(set) var lastSeq: UInt64 = 0
    /// Why signupd ended the session, once it has (`nil` reason: a client's `close`).
    public private(set) var closed: String??

    /// A session of `form` before anything is known of it: every field empty.
    public init(form: FormDescription) {
        self.form = form
        for field in form.fields { fields[field.name] = FieldValidation(field: field.name) }
    }

    /// Applies an event if it concerns this session and is newer than what was applied;
    /// returns the change it made.
    @discardableResult
    public mutating func apply(_ event: ServerEvent) -> FormChange? {
        switch event {
        case .session(let sessionID, let seq, let change, _):
            guard session.isEmpty || sessionID == session, seq > lastSeq else { return nil }
            lastSeq = seq
            return FormChange(seq: seq, apply(change))
        case .localeChanged(let sessionID, let locale, _) where sessionID == session:
            self.locale = locale
            return FormChange(seq: nil, .locale(locale))
        case .closed(let sessionID, let reason, _) where sessionID == session:
            closed = .some(reason)
            return FormChange(seq: nil, .closed(reason: reason))
        default:
            // Other events, and those a newer daemon added, change nothing here.
            return nil
        }
    }

    private mutating func apply(_ change: SessionEvent) -> FormChange.Kind {
        switch change {
        case .validation(let field, let state, let message):
            let validation = FieldValidation(field: field, state: state, message: message.text, messageId: message.id, params: message.params)
            fields[field] = validation
            return .validation(validation)
        case .enabled(let value):
            enabled = value
            if value { paused = nil }
            return .enabled(value)
        case .busy(let value):
            busy = value
            return .busy(value)
        case .result(let ok, let message, let user, let token):
            let outcome = FormResult(ok: ok, message: message.text, messageId: message.id, params: message.params, user: user, token: token)
            result = outcome
            if message.id == "signup.paused" || message.id == "signup.paused_note" { paused = outcome }
            return .result(outcome)
        }
    }

    /// Whether some field still waits for an availability answer.
    public var validating: Bool { fields.values.contains { $0.state == .validating } }

    /// The first field that is not ok, in form order, with its validation.
    public var firstProblem: (field: FormDescription.Field, validation: FieldValidation)? {
        for field in form.fields {
            let validation = fields[field.name] ?? FieldValidation(field: field.name)
            if validation.state != .ok { return (field, validation) }
        }
        return nil
    }

    /// What a scripted fill waits for: whether submit can go now, the checks still run, or a
    /// field stops it (its validation says why).
    public enum Readiness: Sendable, Equatable {
        /// Submit is enabled.
        case ready
        /// A check runs, or signupd has not said `enabled` yet.
        case waiting
        /// This field is not ok, and no check that could change it runs.
        case blocked(field: FormDescription.Field, validation: FieldValidation)
        /// Every field is ok, yet submit stays off and signupd said why with a failed
        /// `result` (sign-up paused by the operator: `signup.paused`).
        case refused(FormResult)
    }

    /// Whether a form filled in full can be submitted now (``Readiness``).
    public var readiness: Readiness {
        if enabled { return .ready }
        if !validating, let problem = firstProblem { return .blocked(field: problem.field, validation: problem.validation) }
        if !validating, !busy, let result, !result.ok { return .refused(result) }
        return .waiting
    }
}
