import FormEngine
import NIOCore
import Protocol

/// Requests: decoding a line, routing it, and the replies and errors it earns.
extension ConnectionHandler {

    func process(_ line: UnsafeRawBufferPointer, output: ConnectionOutput) {
        if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { return }  // blank lines are ignored
        let request: Request
        do {
            request = try Request.decode(line: line)
        } catch {
            output.enqueue(.error(code: error.code, message: error.message, session: nil, id: error.id))
            return
        }
        dispatch(request, output: output)
    }

    private func fail(_ output: ConnectionOutput, _ code: ErrorCode, _ message: String, id: RequestID?, session: String? = nil) {
        output.deliver(.error(code: code, message: message, session: session, id: id))
    }

    private func dispatch(_ request: Request, output: ConnectionOutput) {
        let id = request.id
        switch request.operation {
        case .ping:
            output.enqueue(.pong(id: id))
        case .describe(let locale):
            // Its answer is large (every form, every field): budgeted like open and submit,
            // so pipelined describes cannot make the daemon render megabytes for one client.
            guard budget.take() else { return fail(output, .rateLimited, "too many requests; slow down", id: id) }
            let library = shared.services.forms.library
            // Labels in the locale the answer says, the one sessions are served in: a form's
            // label.de without a de catalogue would otherwise mix German labels with English
            // messages (--check-config warns about such labels).
            let resolved = library.catalogues.resolve(locale ?? "en")
            output.enqueue(.description(forms: library.forms.map { $0.describedWithIdentity(locale: resolved) }, locale: resolved, id: id))
        case .open(let name, let locale):
            open(name, locale: locale, id: id, output: output)
        case .locale(let sessionID, let locale):
            guard let session = resolve(sessionID, id: id, output: output) else { return }
            // It re-renders the snapshot for every connection holding the session: budgeted
            // like open and attach. Answered in request order, like snapshot.
            guard budget.take() else { return fail(output, .rateLimited, "too many requests; slow down", id: id, session: session.id) }
            awaitIfElsewhere(session)
            Self.onLoop(of: session) { session in
                defer { Self.answered(output, from: session) }
                guard !session.isClosed else { return output.deliver(.error(code: .unknownSession, message: "session \(session.id) has ended", session: session.id, id: id)) }
                session.switchLocale(to: locale, id: id, from: output)
            }
        case .attach(let sessionID):
            attach(sessionID, id: id, output: output)
        case .set(let sessionID, let field, let value):
            guard let session = resolve(sessionID, id: id, output: output) else { return }
            run(.set(field: field, value: value), on: session, id: id, output: output)
        case .submit(let sessionID):
            guard let session = resolve(sessionID, id: id, output: output) else { return }
            guard !shared.services.registry.isDraining else {
                return fail(output, .shuttingDown, "the server is shutting down; submit again after it restarts", id: id, session: session.id)
            }
            guard budget.take() else { return fail(output, .rateLimited, "too many requests; slow down", id: id, session: session.id) }
            let hashQueue = shared.services.accounts.hashQueue
            if let refusal = hashQueue.wouldAccept(uid: output.peer.uid), refusal != .stopped {
                let message = refusal == .userQueueFull
                    ? "too many signups and logins in progress for your uid (at most \(hashQueue.maxPerUID)); submit again when one has finished"
                    : "too many signups and logins in progress (at most \(hashQueue.maxTotal)); submit again shortly"
                return fail(output, .rateLimited, message, id: id, session: session.id)
            }
            run(.submit, on: session, id: id, output: output)
        case .snapshot(let sessionID):
            guard let session = resolve(sessionID, id: id, output: output) else { return }
            awaitIfElsewhere(session)
            Self.onLoop(of: session) { session in
                defer { Self.answered(output, from: session) }
                guard !session.isClosed else { return output.deliver(.error(code: .unknownSession, message: "session \(session.id) has ended", session: session.id, id: id)) }
                session.sendSnapshot(to: output, id: id)
            }
        case .close(let sessionID):
            guard let session = resolve(sessionID, id: id, output: output) else { return }
            sessions.removeAll { $0 === session }
            Self.onLoop(of: session) { $0.unsubscribe(output) }
            output.enqueue(.closed(session: session.id, id: id))
        case .sessions:
            // Only the caller's own uid: ids of other users' sessions are not disclosed. It walks
            // every live session, so it is budgeted like open and submit.
            guard budget.take() else { return fail(output, .rateLimited, "too many requests; slow down", id: id) }
            output.enqueue(.sessionList(sessions: shared.services.directory.summaries(ownedBy: output.peer.uid, now: shared.services.clock.now()), id: id))
        case .verify(let token):
            guard budget.take() else { return fail(output, .rateLimited, "too many requests; slow down", id: id) }
            awaitingReply = true
            shared.services.accounts.verify(token: token, on: output.eventLoop).whenComplete { result in
                defer { output.replyComplete() }
                switch result {
                case .success(let user?): output.deliver(.verified(user: user, id: id))
                case .success(nil): output.deliver(.error(code: .invalidToken, message: "unknown, malformed or expired token", session: nil, id: id))
                case .failure: output.deliver(.error(code: .internal, message: "the account store is unavailable", session: nil, id: id))
                }
            }
        }
    }

    private func open(_ name: String, locale: String?, id: RequestID?, output: ConnectionOutput) {
        let library = shared.services.forms.library
        guard let form = library.form(named: name) else {
            let known = library.forms.map(\.name).joined(separator: ", ")
            return fail(output, .unknownForm, "unknown form \"\(name)\"; known: \(known)", id: id)
        }
        guard !shared.services.registry.isDraining else { return fail(output, .shuttingDown, "the server is shutting down", id: id) }
        guard sessions.count < shared.limits.maxSessionsPerConnection else {
            return fail(output, .limitExceeded, "at most \(shared.limits.maxSessionsPerConnection) sessions per connection", id: id)
        }
        guard budget.take() else { return fail(output, .rateLimited, "too many requests; slow down", id: id) }
        let services = shared.services
        let session = services.directory.add { sessionID in
            Session(id: sessionID, form: form, locale: locale ?? "en", owner: output, services: services)
        }
        sessions.append(session)
        output.enqueue(.opened(session: session.id, form: form.name, locale: session.locale, id: id))
        session.sendSnapshot(to: output, id: id)
    }

    private func attach(_ sessionID: String, id: RequestID?, output: ConnectionOutput) {
        guard !sessions.contains(where: { $0.id == sessionID }) else {
            return fail(output, .sessionOpen, "this connection already holds session \(sessionID)", id: id, session: sessionID)
        }
        guard let session = shared.services.directory.find(sessionID) else {
            return fail(output, .unknownSession, "no session \(sessionID)", id: id, session: sessionID)
        }
        guard session.ownerUID == output.peer.uid else {
            return fail(output, .forbidden, "session \(sessionID) belongs to another user", id: id, session: sessionID)
        }
        guard sessions.count < shared.limits.maxSessionsPerConnection else {
            return fail(output, .limitExceeded, "at most \(shared.limits.maxSessionsPerConnection) sessions per connection", id: id)
        }
        guard budget.take() else { return fail(output, .rateLimited, "too many requests; slow down", id: id) }
        sessions.append(session)
        awaitIfElsewhere(session)
        Self.onLoop(of: session) { session in
            defer { Self.answered(output, from: session) }
            guard !session.isClosed else {
                output.deliver(.error(code: .unknownSession, message: "session \(sessionID) has ended", session: sessionID, id: id))
                output.sessionEnded(sessionID)
                return
            }
            session.subscribe(output)
            output.deliver(.attached(session: session.id, form: session.formName, locale: session.locale, id: id))
            session.sendSnapshot(to: output, id: id)
        }
    }

    /// The session a request names, or the connection's latest one.
    private func resolve(_ sessionID: String?, id: RequestID?, output: ConnectionOutput) -> Session? {
        if let sessionID {
            if let session = sessions.last(where: { $0.id == sessionID }) { return session }
            fail(output, .unknownSession, "this connection holds no session \(sessionID)", id: id, session: sessionID)
            return nil
        }
        if let session = sessions.last { return session }
        fail(output, .noSession, "no session is open on this connection; send {\"op\":\"open\",\"form\":...} first", id: id)
        return nil
    }

    private func run(_ input: FormInput, on session: Session, id: RequestID?, output: ConnectionOutput) {
        // The common case (a connection's own session) calls straight through: no closure
        // to allocate on the per-keystroke path.
        if session.eventLoop.inEventLoop {
            Self.apply(input, to: session, id: id, output: output)
        } else {
            awaitingReply = true
            session.eventLoop.execute {
                Self.apply(input, to: session, id: id, output: output)
                output.replyComplete()
            }
        }
    }

    /// A request answered on another loop holds back the connection's next requests.
    private func awaitIfElsewhere(_ session: Session) {
        if !session.eventLoop.inEventLoop { awaitingReply = true }
    }

    /// After the answer from `session`'s loop: the connection may go on (a no-op when the
    /// session is on the connection's own loop, which never waited).
    private static func answered(_ output: ConnectionOutput, from session: Session) {
        if session.eventLoop !== output.eventLoop { output.replyComplete() }
    }

    /// Feeds a client input to a session and reports a refusal as its wire error.
    private static func apply(_ input: FormInput, to session: Session, id: RequestID?, output: ConnectionOutput) {
        guard !session.isClosed else {
            return output.deliver(.error(code: .unknownSession, message: "session \(session.id) has ended", session: session.id, id: id))
        }
        do throws(FormError) {
            try session.handle(input, id: id, from: output)
        } catch {
            let (code, message): (ErrorCode, String) = switch error {
            case .unknownField(let name):
                (.unknownField, "form \(session.formName) has no field \"\(name)\"")
            case .notReady: (.notReady, "submit is not enabled yet: every field must be ok and nothing in progress")
            case .finished: (.finished, "this session has completed; open a new one")
            }
            output.deliver(.error(code: code, message: message, session: session.id, id: id))
        }
    }

    /// Runs `body` on the session's event loop: at once when that is this thread.
    static func onLoop(of session: Session, _ body: @escaping @Sendable (Session) -> Void) {
        if session.eventLoop.inEventLoop {
            body(session)
        } else {
            session.eventLoop.execute { body(session) }
        }
    }
}
