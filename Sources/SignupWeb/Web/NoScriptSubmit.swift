import SignupClient
import SignupProtocol

/// A plain form's POST (a browser without script): the values go to a session of their
/// own, the bridge waits for signupd's checks (availability, password policy), submits if
/// signupd enables it, and waits for the result.
struct NoScriptSubmit: Sendable {
    let socketPath: String
    let timeout: Duration

    struct Outcome: Sendable {
        var state: FormState
        var result: FormResult?
    }

    func run(form name: String, values: [String: String], locale: String, client: SignupConnection.FrontEndClient) async throws(SignupClientError) -> Outcome {
        let form = try await SignupForm.open(name, locale: locale, socket: socketPath, configuration: .init(speaksFor: client))
        do throws(SignupClientError) {
            for field in form.description.fields {
                if let value = values[field.name], !value.isEmpty { try await form.set(field.name, to: value) }
            }
            try await form.settle()
            let outcome = try await withDeadline { () async throws(SignupClientError) -> Outcome in
                // Subscribed before the state is read: no change slips between.
                let changes = form.changes()
                var iterator = changes.makeAsyncIterator()
                while form.state.validating, await iterator.next() != nil {}
                // The check's answer and the `enabled` it causes come together: a ping after
                // the answer returns once both are applied.
                try await form.settle()
                guard form.state.enabled else { return Outcome(state: form.state) }
                let results = form.results()
                try await form.submit()
                var waiting = results.makeAsyncIterator()
                let result = await waiting.next()
                return Outcome(state: form.state, result: result)
            }
            await form.close()
            return outcome
        } catch {
            await form.close()
            throw error
        }
    }

    /// `work`, or the state so far once `timeout` has passed.
    private func withDeadline(_ work: @escaping @Sendable () async throws(SignupClientError) -> Outcome) async throws(SignupClientError) -> Outcome {
        let timeout = timeout
        let answer: Result<Outcome, SignupClientError>? = await withTaskGroup(of: Result<Outcome, SignupClientError>?.self) { group in
            group.addTask {
                do throws(SignupClientError) { return .success(try await work()) } catch { return .failure(error) }
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
        switch answer {
        case .success(let outcome): return outcome
        case .failure(let error): throw error
        case nil: throw .timeout(seconds: Double(timeout.components.seconds))
        }
    }
}
