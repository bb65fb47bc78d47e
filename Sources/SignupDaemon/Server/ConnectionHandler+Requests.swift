import FormEngine
import NIOCore
import SignupProtocol

/// Requests: decoding a line, routing it, and the replies and errors it earns.
extension ConnectionHandler {

    func process(_ line: UnsafeRawBufferPointer, output: ConnectionOutput) {
        if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { return }  // blank lines are ignored
        let request: Request
        do {
            request = try Request.decode(line: line)
        } catch {
            return Self.refuse(.malformed(error), id: nil, output: output)
        }
        Self.answer(request.id, output: output) { () throws(RequestFailure) in try dispatch(request, output: output) }
    }

    /// Runs a request's handler; the one `catch` that turns its refusal into the wire error.
    static func answer(_ id: RequestID?, output: ConnectionOutput, _ handler: () throws(RequestFailure) -> Void) {
        do {
            try handler()
        } catch {
            refuse(error, id: id, output: output)
        }
    }

    /// Sends a refusal as its `error` event.
    static func refuse(_ failure: RequestFailure, id: RequestID?, output: ConnectionOutput) {
        output.reporting?.refused(failure, principal: output.principal, pid: output.peer.pid)
        output.deliver(failure.event(id: id))
    }

    /// Takes `cost` tokens (one unless the request asks for more work) from the
    /// connection's budget for expensive requests.
    func spend(session: String? = nil, cost: Int = 1) throws(RequestFailure) {
        guard budget.take(cost) else { throw .tooManyRequests(session: session) }
    }

    /// Takes a token from the connection's budget for `verify` and `logout`.
    private func spendTokenCheck() throws(RequestFailure) {
        guard tokenBudget.take() else { throw .tooManyRequests(session: nil) }
    }

    private func dispatch(_ request: Request, output: ConnectionOutput) throws(RequestFailure) {
        let id = request.id
        switch request.operation {
        case .ping:
            output.deliver(.pong(id: id))
        case .describe(let locale):
            // Its answer is large (every form, every field): budgeted like open and submit,
            // so pipelined describes cannot make the daemon render megabytes for one client.
            try spend()
            let library = shared.services.forms.library
            // Labels in the locale the answer says, the one sessions are served in: a form's
            // label.de without a de catalogue would otherwise mix German labels with English
            // messages (--check-config warns about such labels).
            let resolved = library.catalogues.resolve(locale ?? "en")
            output.deliver(.description(forms: library.forms.map { $0.describedWithIdentity(locale: resolved) }, locale: resolved, id: id))
        case .open(let name, let locale):
            try open(name, locale: locale, id: id, output: output)
        case .locale(let sessionID, let locale):
            let session = try resolve(sessionID)
            // It re-renders the snapshot for every connection holding the session: budgeted
            // like open and attach. Answered in request order, like snapshot.
            try spend(session: session.id)
            answerOnLoop(of: session, id: id, output: output) { session throws(RequestFailure) in
                guard !session.isClosed else { throw .sessionEnded(session.id) }
                session.switchLocale(to: locale, id: id, from: output)
            }
        case .attach(let sessionID):
            try attach(sessionID, id: id, output: output)
        case .set(let sessionID, let field, let value):
            let session = try resolve(sessionID)
            run(.set(field: field, value: value), on: session, id: id, output: output)
        case .submit(let sessionID):
            let session = try resolve(sessionID)
            guard !shared.services.registry.isDraining else { throw .shuttingDown(session: session.id) }
            try spend(session: session.id)
            let hashQueue = shared.services.accounts.hashQueue
            if let refusal = hashQueue.wouldAccept(peer: principalKey), refusal != .stopped {
                throw refusal == .userQueueFull
                    ? .hashQueueFullForUser(limit: hashQueue.maxPerUID, session: session.id)
                    : .hashQueueFull(limit: hashQueue.maxTotal, session: session.id)
            }
            run(.submit, on: session, id: id, output: output)
        case .snapshot(let sessionID):
            let session = try resolve(sessionID)
            answerOnLoop(of: session, id: id, output: output) { session throws(RequestFailure) in
                guard !session.isClosed else { throw .sessionEnded(session.id) }
                session.sendSnapshot(to: output, id: id)
            }
        case .close(let sessionID):
            let hold = try resolveHold(sessionID)
            holds.removeAll { $0 === hold }
            if hold.isOwner { remember(ended: hold.session.id) }
            // The session's loop detaches, then answers: what the session published before
            // reaches this connection ahead of `closed`, nothing after it (a session on
            // another loop kept publishing to it until its unsubscribe ran there).
            answerOnLoop(of: hold.session, id: id, output: output) { session throws(RequestFailure) in
                session.unsubscribe(hold)
                output.deliver(.closed(session: session.id, id: id))
            }
        case .sessions(let page):
            try listSessions(page, all: false, id: id, output: output)
        case .allSessions(let page):
            try listSessions(page, all: true, id: id, output: output)
        case .status:
            // Its counts come from per-peer tables, not walks: budgeted like open and
            // submit all the same (administrators' also render the metrics).
            try spend()
            status(id: id, output: output)
        case .signups(let pause, let message):
            try spend()
            try signups(pause: pause, message: message, id: id, output: output)
        case .client(let client, let address):
            try nameClient(client, address: address, id: id, output: output)
        case .resume(let sessionID, let secret):
            try resume(sessionID, secret: secret, id: id, output: output)
        case .verify(let token):
            try spendTokenCheck()
            answerWhenStoreAnswers(shared.services.accounts.verify(token: token, peer: output.principal.key, on: output.eventLoop), id: id, output: output) { user throws(RequestFailure) in
                guard let user else { throw .invalidToken }
                output.deliver(.verified(user: user, id: id))
            }
        case .logout(let token):
            try spendTokenCheck()
            answerWhenStoreAnswers(shared.services.accounts.logout(token: token, peer: output.principal.key, on: output.eventLoop), id: id, output: output) { revoked throws(RequestFailure) in
                guard revoked else { throw .invalidToken }
                output.deliver(.revoked(id: id))
            }
        }
    }

    private func open(_ name: String, locale: String?, id: RequestID?, output: ConnectionOutput) throws(RequestFailure) {
        let library = shared.services.forms.library
        guard let form = library.form(named: name) else { throw .unknownForm(name, known: library.forms.map(\.name)) }
        guard !shared.services.registry.isDraining else { throw .shuttingDown(session: nil) }
        try checkSessionLimit()
        try spend()
        let services = shared.services
        if let refusal = services.sessionBytes.take(SessionBytesState.perSession, peer: output.principal.key) {
            throw .sessionMemory(refusal, limit: services.sessionBytes.limit, session: nil)
        }
        let session = services.directory.add { sessionID in
            Session(id: sessionID, form: form, locale: locale ?? "en", owner: output, services: services)
        }
        if let hold = session.hold(of: output) { holds.append(hold) }
        hasHeldSession = true
        // Handover (issue 16): a connection holding a session is carried across a restart.
        storeForHandover(output: output)
        shared.logger.debug("session opened", metadata: output.principal.logMetadata(pid: output.peer.pid, ["session": session.id, "form": form.name]))
        output.deliver(.opened(session: session.id, form: form.name, locale: session.locale, resume: session.resumeSecret, id: id))
        session.sendSnapshot(to: output, id: id)
    }

    private func attach(_ sessionID: String, id: RequestID?, output: ConnectionOutput) throws(RequestFailure) {
        dropEndedHolds()
        guard !holds.contains(where: { $0.session.id == sessionID }) else { throw .alreadyHeld(session: sessionID) }
        let session = try findLive(sessionID, output: output)
        guard session.principal.owner == output.principal.owner else { throw .otherUsersSession(sessionID) }
        try checkSessionLimit()
        try spend()
        let hold = SessionHold(session, output, isOwner: false)
        holds.append(hold)
        hasHeldSession = true
        storeForHandover(output: output)
        let maxViews = shared.services.maxViewsPerSession
        answerOnLoop(of: session, id: id, output: output) { session throws(RequestFailure) in
            guard !session.isClosed else {
                hold.end()
                throw .sessionEnded(sessionID)
            }
            // Counted here, on the session's loop, where views join: two attaches at once
            // cannot both take the last place.
            guard session.views < maxViews else {
                hold.end()
                throw .viewsPerSession(limit: maxViews, session: sessionID)
            }
            session.subscribe(hold)
            output.deliver(.attached(session: session.id, form: session.formName, locale: session.locale, id: id))
            session.sendSnapshot(to: output, id: id)
        }
    }

    /// A live session by id; else why not: ended (with the server's reason, to its owner), or none.
    private func findLive(_ sessionID: String, output: ConnectionOutput) throws(RequestFailure) -> Session {
        let directory = shared.services.directory
        if let session = directory.find(sessionID) { return session }
        if let reason = directory.endReason(of: sessionID, for: output.principal.owner) { throw .sessionEndedBecause(sessionID, reason: reason) }
        throw endedSessions.contains(sessionID) ? .sessionEnded(sessionID) : .noSuchSession(sessionID)
    }

    /// "session S has ended", with the server's reason when it ended it (idle, abandoned).
    private func ended(_ sessionID: String) -> RequestFailure {
        guard let output, let reason = shared.services.directory.endReason(of: sessionID, for: output.principal.owner) else { return .sessionEnded(sessionID) }
        return .sessionEndedBecause(sessionID, reason: reason)
    }

    /// `client`: a trusted front end names the end client this connection speaks for, once,
    /// before its first session. From then on every per-peer limit counts that client (by its
    /// address's network when given), within the front end's own ceiling.
    private func nameClient(_ client: String, address: String?, id: RequestID?, output: ConnectionOutput) throws(RequestFailure) {
        // Logged (summarised) with the refusal.
        guard isTrustedBridge else { throw .notTrusted(uid: output.peer.uid) }
        if let named = output.principal.client { throw .clientAlreadyNamed(named) }
        guard !hasHeldSession else { throw .clientAfterSession }
        var parsed: ClientAddress?
        if let address {
            guard let valid = ClientAddress(address) else { throw .invalidAddress(address) }
            parsed = valid
        }
        let principal = Principal(uid: output.peer.uid, client: client, address: parsed)
        let registry = shared.services.registry
        let failure: RequestFailure
        switch registry.name(output, from: principalKey, to: principal.key, now: shared.services.clock.now()) {
        case .named:
            output.speak(for: principal)
            principalKey = principal.key
            output.deliver(.clientNamed(client: client, address: parsed?.text, id: id))
            return
        case .tooManyForClient: failure = .tooManyConnectionsForClient(principal.key, limit: registry.maxConnectionsPerClient)
        case .connectingTooFast: failure = .clientConnectingTooFast(principal.key, perSecond: registry.connectsPerUIDPerSecond ?? 0)
        }
        // As a refusal at connect: the error (logged, summarised), then `bye` with the same words.
        Self.refuse(failure, id: id, output: output)
        output.end(.refusedClient(failure.message))
    }

    /// `resume`: takes back a session whose opener's connection dropped (or that another
    /// connection of the same owner holds), with the secret `opened` carried. A wrong secret
    /// costs the request budget like a failed guess.
    private func resume(_ sessionID: String, secret: String, id: RequestID?, output: ConnectionOutput) throws(RequestFailure) {
        dropEndedHolds()
        guard !holds.contains(where: { $0.session.id == sessionID && $0.isOwner }) else { throw .alreadyHeld(session: sessionID) }
        try spend(session: sessionID)
        let session = try findLive(sessionID, output: output)
        guard session.principal.owner == output.principal.owner else { throw .otherUsersSession(sessionID) }
        let viewing = holds.first { $0.session === session }
        if viewing == nil { try checkSessionLimit() }
        hasHeldSession = true
        let reporting = shared.services.reporting
        let principal = output.principal
        let pid = output.peer.pid
        let checkBudget = shared.services.checkBudget
        let clock = shared.services.clock
        let handler = NIOLoopBound(self, eventLoop: output.eventLoop)
        answerOnLoop(of: session, id: id, output: output) { session throws(RequestFailure) in
            do throws(RequestFailure) {
                let hold = try session.resume(by: output, secret: secret, id: id)
                // The connection's list of holds is its loop's: at once when that is this
                // thread; else ahead of the reply's completion (both queued there in order).
                let taken: @Sendable () -> Void = {
                    let handler = handler.value
                    handler.holds.removeAll { $0.session === session }
                    handler.holds.append(hold)
                    handler.storeForHandover(output: output)
                }
                output.perform(taken)
            } catch {
                if case .wrongResumeSecret = error {
                    // A guess: it costs what a name lookup does (the enumeration budget).
                    _ = checkBudget.charge(peer: principal.key, now: clock.now())
                    reporting.log.log(.notice, "resume with a wrong secret", peer: principal.key, metadata: principal.logMetadata(pid: pid, ["session": sessionID.loggable]))
                }
                throw error
            }
        }
    }

    private func checkSessionLimit() throws(RequestFailure) {
        dropEndedHolds()
        guard holds.count < shared.limits.maxSessionsPerConnection else { throw .sessionsPerConnection(limit: shared.limits.maxSessionsPerConnection) }
    }

    /// The session a request names, or the connection's latest one still held.
    private func resolve(_ sessionID: String?) throws(RequestFailure) -> Session {
        try resolveHold(sessionID).session
    }

    private func resolveHold(_ sessionID: String?) throws(RequestFailure) -> SessionHold {
        if let sessionID {
            guard let hold = holds.last(where: { $0.session.id == sessionID }) else {
                throw endedSessions.contains(sessionID) ? ended(sessionID) : .notHeld(session: sessionID)
            }
            guard !hold.hasEnded else {
                dropEndedHolds()
                throw ended(sessionID)
            }
            return hold
        }
        dropEndedHolds()
        guard let hold = holds.last else { throw .noSession }
        return hold
    }

    /// Forgets the holds whose session has ended, remembering their ids.
    private func dropEndedHolds() {
        guard holds.contains(where: \.hasEnded) else { return }
        for hold in holds where hold.hasEnded { remember(ended: hold.session.id) }
        holds.removeAll(where: \.hasEnded)
    }

    /// A session this connection held has ended: requests naming it are told so ("has
    /// ended", not "not held" or "no session"), for as many as the connection may hold.
    private func remember(ended session: String) {
        endedSessions.append(session)
        if endedSessions.count > shared.limits.maxSessionsPerConnection { endedSessions.removeFirst() }
    }

    private func run(_ input: FormInput, on session: Session, id: RequestID?, output: ConnectionOutput) {
        // The common case (a connection's own session) calls straight through: no closure
        // to allocate on the per-keystroke path.
        if session.eventLoop.inEventLoop {
            Self.answer(id, output: output) { () throws(RequestFailure) in try Self.apply(input, to: session, id: id, output: output) }
        } else {
            answerOnLoop(of: session, id: id, output: output) { session throws(RequestFailure) in try Self.apply(input, to: session, id: id, output: output) }
        }
    }

    /// Answers a request on `session`'s loop: at once when that is the connection's own;
    /// from another loop, the connection's next requests wait for the answer (request order).
    private func answerOnLoop(
        of session: Session, id: RequestID?, output: ConnectionOutput, _ body: @escaping @Sendable (Session) throws(RequestFailure) -> Void
    ) {
        let elsewhere = !session.eventLoop.inEventLoop
        if elsewhere { state.awaitReply() }
        onLoop(of: session) { session in
            defer { if elsewhere { output.replyComplete() } }
            Self.answer(id, output: output) { () throws(RequestFailure) in try body(session) }
        }
    }

    /// Runs `body` on the session's event loop for this connection's uid: at once when that
    /// is this thread, else within the uid's share of that loop, after what it asked there
    /// before (`LoopWork`).
    func onLoop(of session: Session, _ body: @escaping @Sendable (Session) -> Void) {
        if session.eventLoop.inEventLoop {
            body(session)
        } else {
            shared.fairTurns.work(on: session.eventLoop).post(for: principalKey) { body(session) }
        }
    }

    /// Answers a request when the account store does; the connection's next requests wait
    /// for it. A store that failed is `store_unavailable`.
    func answerWhenStoreAnswers<T: Sendable>(
        _ future: EventLoopFuture<T>, id: RequestID?, output: ConnectionOutput, _ body: @escaping @Sendable (T) throws(RequestFailure) -> Void
    ) {
        state.awaitReply()
        future.whenComplete { result in
            defer { output.replyComplete() }
            Self.answer(id, output: output) { () throws(RequestFailure) in
                switch result {
                case .success(let value): try body(value)
                case .failure: throw .storeUnavailable
                }
            }
        }
    }

    /// Feeds a client input to a session; a refusal is its wire error.
    private static func apply(_ input: FormInput, to session: Session, id: RequestID?, output: ConnectionOutput) throws(RequestFailure) {
        guard !session.isClosed else { throw .sessionEnded(session.id) }
        if case .set(let field, let value) = input {
            try session.set(field: field, value: value, id: id, from: output)
            return
        }
        do throws(FormError) {
            try session.handle(input, id: id, from: output)
        } catch {
            throw RequestFailure(error, form: session.formName, session: session.id)
        }
    }

    /// Runs `body` on the session's event loop: at once when that is this thread. The
    /// daemon's own work (not a connection's: that is `onLoop(of:_:)`, shared per uid).
    static func onLoop(of session: Session, _ body: @escaping @Sendable (Session) -> Void) {
        if session.eventLoop.inEventLoop {
            body(session)
        } else {
            session.eventLoop.execute { body(session) }
        }
    }
}
