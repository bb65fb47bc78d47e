import SignupProtocol

extension SignupConnection {
    /// The forms signupd serves, labels in `locale`.
    public func describe(locale: String? = nil) async throws(SignupClientError) -> [FormDescription] {
        let reply = try await request(.describe(locale: locale))
        guard case .description(let forms, _, _) = reply.event else { throw .unexpectedReply(reply, answering: "describe") }
        return forms
    }

    /// A session opened or joined: its id, form and locale, and for the opener the secret
    /// that resumes it from another connection after this one drops.
    public struct SessionHandle: Sendable, Equatable {
        /// The session id.
        public var session: String
        /// The form's name.
        public var form: String
        /// The locale the daemon resolved for it, if it named one.
        public var locale: String?
        /// `opened`'s `resume`, when the daemon offers resuming.
        public var resumeSecret: String?
    }

    /// Opens a session of `form`; its snapshot follows as events.
    public func open(form: String, locale: String? = nil) async throws(SignupClientError) -> SessionHandle {
        let reply = try await request(.open(form: form, locale: locale))
        guard case .opened(let session, let form, let locale, let secret, _) = reply.event else { throw .unexpectedReply(reply, answering: "open") }
        return SessionHandle(session: session, form: form, locale: locale, resumeSecret: secret)
    }

    /// Joins a live session of the same user (a monitor); its snapshot follows as events.
    public func attach(session: String) async throws(SignupClientError) -> SessionHandle {
        let reply = try await request(.attach(session: session))
        guard case .attached(let session, let form, let locale, _) = reply.event else { throw .unexpectedReply(reply, answering: "attach") }
        return SessionHandle(session: session, form: form, locale: locale)
    }

    /// Takes over a session whose opener's connection dropped, within the daemon's resume
    /// grace: this connection becomes its opener. Its snapshot (and last result) follow as
    /// events, `seq` continuing. Refused with `forbidden` (wrong secret, another user's) or
    /// `unknown_session` (ended, or the grace passed).
    public func resume(session: String, secret: String) async throws(SignupClientError) -> SessionHandle {
        let reply = try await request(.resume(session: session, secret: secret))
        guard case .resumed(let session, let form, let locale, _) = reply.event else { throw .unexpectedReply(reply, answering: "resume") }
        return SessionHandle(session: session, form: form, locale: locale, resumeSecret: secret)
    }

    /// Sets a field's whole new value; its validation comes as events.
    public func set(_ field: String, to value: String, session: String? = nil) async throws(SignupClientError) {
        try await send(.set(session: session, field: field, value: value))
    }

    /// Submits; returns once signupd took it (`busy`), or throws its refusal (`not_ready`).
    @discardableResult
    public func submit(session: String? = nil) async throws(SignupClientError) -> ServerMessage {
        try await request(.submit(session: session))
    }

    /// Asks for the session's full state again; it comes as events.
    public func snapshot(session: String? = nil) async throws(SignupClientError) {
        try await request(.snapshot(session: session))
    }

    /// Switches a session's locale: a `locale` event, then its snapshot again in that language.
    public func switchLocale(to locale: String, session: String? = nil) async throws(SignupClientError) {
        try await request(.locale(session: session, locale: locale))
    }

    /// Closes a session (the opener's `close` ends it; an attached connection's detaches).
    public func closeSession(_ session: String? = nil) async throws(SignupClientError) {
        try await request(.close(session: session))
    }

    /// The user a login token belongs to.
    public func verify(token: String) async throws(SignupClientError) -> String {
        let reply = try await request(.verify(token: token))
        guard case .verified(let user, _) = reply.event else { throw .unexpectedReply(reply, answering: "verify") }
        return user
    }

    /// Revokes a login token everywhere the store is shared.
    public func logout(token: String) async throws(SignupClientError) {
        let reply = try await request(.logout(token: token))
        guard case .revoked = reply.event else { throw .unexpectedReply(reply, answering: "logout") }
    }

    /// The live sessions of this user, oldest first: every page, each asked for once the
    /// previous one has come.
    public func sessions() async throws(SignupClientError) -> [SessionSummary] {
        var listed: [SessionSummary] = []
        var after: String?
        repeat {
            let page = try await sessions(SessionsPage(limit: SessionsPage.maxLimit, after: after))
            listed += page.sessions
            after = page.sessions.isEmpty ? nil : page.next
        } while after != nil
        return listed
    }

    /// One page of this user's live sessions, and the cursor of the next page (nil: the last).
    public func sessions(_ page: SessionsPage) async throws(SignupClientError) -> (sessions: [SessionSummary], next: String?) {
        let reply = try await request(.sessions(page))
        guard case .sessionList(let sessions, let next, _) = reply.event else { throw .unexpectedReply(reply, answering: "sessions") }
        return (sessions, next)
    }

    /// For a trusted bridge (a web front end): names the end client this connection speaks
    /// for, and its address, so that signupd's per-user limits and logs count that client.
    /// Returns the client and address as the daemon read them.
    @discardableResult
    public func nameClient(_ client: String, address: String?) async throws(SignupClientError) -> (client: String, address: String?) {
        let reply = try await request(.client(client: client, address: address))
        guard case .clientNamed(let client, let address, _) = reply.event else { throw .unexpectedReply(reply, answering: "client") }
        return (client, address)
    }
}

extension RequestID {
    /// The id as a JSON value.
    var json: JSONValue {
        switch self {
        case .string(let text): .string(text)
        case .integer(let number): .number(String(number))
        }
    }
}
