import SignupProtocol

/// A form session on a ``BlockingSignupConnection``: opened, kept up to date in a
/// ``FormState`` and driven one request at a time. The blocking counterpart of
/// ``SignupForm`` for command-line tools; the state's rules are the same value.
public final class BlockingSignupForm<Failure: Error> {
    /// The connection it speaks on.
    public let connection: BlockingSignupConnection<Failure>
    /// The session's state, from every message read through this form.
    public private(set) var state: FormState
    private let failure: (SignupClientError) -> Failure

    /// Opens `form` in `locale` and applies its snapshot.
    public init(connection: BlockingSignupConnection<Failure>, form: FormDescription, locale: String?, failure: @escaping (SignupClientError) -> Failure) throws(Failure) {
        self.connection = connection
        self.failure = failure
        state = FormState(form: form)
        let openID = try connection.request(.open(form: form.name, locale: locale))
        var snapshot: [ServerMessage] = []
        let reply = try connection.reply(to: openID) { message throws(Failure) in snapshot.append(message) }
        guard case .opened(let session, _, let locale, _, _) = reply.event else { throw failure(.unexpectedReply(reply, answering: "open")) }
        state.session = session
        state.locale = locale
        for message in snapshot { state.apply(message.event) }
    }

    /// A form that is done ends its session: signupd would otherwise keep it for `resume`
    /// (`--resume-grace`), which is for a client that was cut off, not one that finished.
    deinit { end() }

    /// Ends the session now (once; `deinit` does it otherwise), without waiting for the reply:
    /// for a tool on its way out.
    public func end() {
        guard !ended else { return }
        ended = true
        connection.sendIfRoom(Request(.close(session: state.session)))
    }
    private var ended = false

    /// Sends a field's new value.
    public func set(_ field: String, _ value: String) throws(Failure) {
        try connection.send(Request(.set(session: state.session, field: field, value: value)))
    }

    /// Asks to submit; returns the request's id, which a refusal (`not_ready`) carries.
    @discardableResult
    public func submit() throws(Failure) -> RequestID {
        state.result = nil  // a new attempt: the last result no longer stands
        return try connection.request(.submit(session: state.session))
    }

    /// Reads one message and applies it; returns it.
    @discardableResult
    public func pump() throws(Failure) -> ServerMessage {
        let message = try connection.receive()
        try apply(message)
        return message
    }

    /// Waits until everything sent so far has been handled (the ping barrier).
    public func settle() throws(Failure) {
        let id = try connection.request(.ping)
        _ = try connection.reply(to: id) { message throws(Failure) in try apply(message) }
    }

    /// Applies a message; signupd ending the session itself (left alone past
    /// `--session-idle-timeout`) fails as ``SignupClientError/sessionClosed(reason:)``.
    private func apply(_ message: ServerMessage) throws(Failure) {
        if case .closed(let session, let reason?, _) = message.event, session == state.session {
            throw failure(.sessionClosed(reason: reason))
        }
        state.apply(message.event)
    }
}
