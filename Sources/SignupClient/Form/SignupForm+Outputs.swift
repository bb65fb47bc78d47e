import SignupProtocol

extension SignupForm {
    /// Every change of the form, in order, from now until the form ends. Each call is a
    /// reader of its own, buffered up to the connection's `eventBufferLimit`; a reader that
    /// falls that far behind is finished rather than fed a gap.
    public func changes() -> AsyncStream<FormChange> {
        outputs(current: { _ in nil }, pick: { $0 })
    }

    /// A field's validation (`validatedUsername`, …): its current value, then each change.
    public func validations(of field: String) -> AsyncStream<FieldValidation> {
        outputs(current: { $0.fields[field] }) { change in
            if case .validation(let validation) = change.kind, validation.field == field { validation } else { nil }
        }
    }

    /// Whether submit is enabled (`signupEnabled`): its current value, then each change.
    public func enabledUpdates() -> AsyncStream<Bool> {
        outputs(current: { $0.enabled }) { change in
            if case .enabled(let value) = change.kind { value } else { nil }
        }
    }

    /// Whether a signup or login runs (`signingIn`): its current value, then each change.
    public func busyUpdates() -> AsyncStream<Bool> {
        outputs(current: { $0.busy }) { change in
            if case .busy(let value) = change.kind { value } else { nil }
        }
    }

    /// Each submit's outcome (`signedIn`), from now on.
    public func results() -> AsyncStream<FormResult> {
        outputs(current: { _ in nil }) { change in
            if case .result(let result) = change.kind { result } else { nil }
        }
    }

    /// A reader that starts with `current` (if any) and then takes what `pick` finds in each change.
    private func outputs<Output: Sendable>(current: (FormState) -> Output?, pick: @escaping @Sendable (FormChange) -> Output?) -> AsyncStream<Output> {
        let (stream, continuation) = AsyncStream.makeStream(of: Output.self, bufferingPolicy: .bufferingOldest(configuration.eventBufferLimit))
        let subscriber: Subscriber = (
            send: { change in
                guard let output = pick(change) else { return true }
                if case .enqueued = continuation.yield(output) { return true }
                return false
            },
            finish: { continuation.finish() }
        )
        let token: Int? = box.withLockedValue { inner in
            guard inner.ended == nil else { return nil }
            // Under the lock: no change can slip between the current value and the first change.
            if let value = current(inner.state) { continuation.yield(value) }
            inner.nextToken += 1
            inner.subscribers[inner.nextToken] = subscriber
            return inner.nextToken
        }
        guard let token else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [box] _ in box.withLockedValue { $0.subscribers[token] = nil } }
        return stream
    }

    /// Applies every line of `connection` as it arrives.
    func observe(_ connection: SignupConnection) {
        // Until the connection ends, which forgets its observers.
        connection.observe { [weak self] message in self?.observed(message) }
    }

    /// Applies one line: a change is applied and passed to every reader, in order.
    func observed(_ message: ServerMessage) {
        var closed = false
        let finished: [Subscriber] = box.withLockedValue { inner in
            guard let change = inner.state.apply(message.event) else { return [] }
            if case .closed = change.kind { closed = true }
            var lagging: [Subscriber] = []
            for (token, subscriber) in inner.subscribers where !subscriber.send(change) {
                inner.subscribers[token] = nil
                lagging.append(subscriber)
            }
            return lagging
        }
        for subscriber in finished { subscriber.finish() }
        // signupd ended the session (idle, or resumed by another connection): nothing more comes.
        if closed { finish(because: .noSession) }
    }
}
