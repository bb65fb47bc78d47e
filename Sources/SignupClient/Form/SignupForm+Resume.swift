import SignupProtocol

extension SignupForm {
    /// Watches `connection` for its end: a drop starts a resume, any other end ends the form.
    func watch(_ connection: SignupConnection) {
        let watcher = Task { [weak self] in
            let end = await connection.end
            await self?.connectionEnded(connection, end)
        }
        box.withLockedValue { $0.watcher = watcher }
    }

    /// The connection the form speaks on, waiting while it is being resumed.
    func currentConnection() async throws(SignupClientError) -> SignupConnection {
        try await connection(otherThan: nil)
    }

    /// The connection that replaced `old` once the resume is done (or the form's end).
    func resumedConnection(after old: SignupConnection) async throws(SignupClientError) -> SignupConnection {
        try await connection(otherThan: old)
    }

    private func connection(otherThan old: SignupConnection?) async throws(SignupClientError) -> SignupConnection {
        let outcome = await withCheckedContinuation { (waiter: CheckedContinuation<Result<SignupConnection, SignupClientError>, Never>) in
            let ready: Result<SignupConnection, SignupClientError>? = box.withLockedValue { inner in
                if let ended = inner.ended { return .failure(ended) }
                if !inner.reconnecting, inner.connection !== old { return .success(inner.connection) }
                inner.waiters.append(waiter)
                return nil
            }
            if let ready { waiter.resume(returning: ready) }
        }
        return try outcome.get()
    }

    /// `connection` ended as `end`. A drop (not the caller's close, not signupd's `bye`) of
    /// a session this form opened is resumed on a new connection within the grace.
    private func connectionEnded(_ connection: SignupConnection, _ end: SignupConnectionEnd) async {
        let resume: (session: String, secret: String)? = box.withLockedValue { inner in
            guard inner.ended == nil, inner.connection === connection else { return nil }
            guard end.isDrop, let secret = inner.resumeSecret, !inner.state.session.isEmpty else { return nil }
            inner.reconnecting = true
            return (inner.state.session, secret)
        }
        guard let resume else {
            if box.withLockedValue({ $0.connection === connection }) { finish(because: .ended(end)) }
            return
        }
        let deadline = ContinuousClock.now + configuration.resumeGrace
        var delay = Duration.milliseconds(20)
        while !Task.isCancelled {
            var fresh: SignupConnection?
            do {
                let connection = try await SignupConnection.connect(to: path, configuration: configuration)
                fresh = connection
                // Observed before the resume: its snapshot is applied as it arrives, and
                // what this form saw already (by seq) is dropped.
                observe(connection)
                _ = try await connection.resume(session: resume.session, secret: resume.secret)
                try await connection.ping()
                let waiters = box.withLockedValue { inner in
                    inner.connection = connection
                    inner.reconnecting = false
                    defer { inner.waiters = [] }
                    return inner.waiters
                }
                for waiter in waiters { waiter.resume(returning: .success(connection)) }
                watch(connection)
                return
            } catch {
                await fresh?.close()
                // Only signupd being away is worth another try; a refusal (the grace passed,
                // the session ended, not ours) or a reply that makes no sense is final.
                guard error.isWorthRetrying, ContinuousClock.now + delay < deadline else {
                    finish(because: error)
                    return
                }
            }
            // A back-off between attempts while signupd is away, not a synchronisation.
            try? await Task.sleep(for: delay)
            delay = min(delay * 2, .seconds(1))
        }
        finish(because: .cancelled)
    }

    /// The form is over: every reader finishes, and inputs waiting for a connection fail.
    func finish(because reason: SignupClientError) {
        let (subscribers, waiters) = box.withLockedValue { inner in
            if inner.ended == nil { inner.ended = reason }
            inner.reconnecting = false
            defer {
                inner.subscribers = [:]
                inner.waiters = []
            }
            return (Array(inner.subscribers.values), inner.waiters)
        }
        for subscriber in subscribers { subscriber.finish() }
        for waiter in waiters { waiter.resume(returning: .failure(reason)) }
    }

    /// Why the form ended, once it has: `ended(.closed)` after ``close()``, `noSession` when
    /// signupd ended the session, the resume's failure when the connection could not be resumed.
    public var endReason: SignupClientError? { box.withLockedValue { $0.ended } }
}
