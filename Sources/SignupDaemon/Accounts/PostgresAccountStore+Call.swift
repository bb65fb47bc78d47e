import Dispatch
import NIOConcurrencyHelpers
import PostgresNIO

extension PostgresAccountStore {
    /// Runs `body` as a task and waits for it, at most `timeout`; any failure is the store
    /// being unavailable. While the server cannot be reached (`StoreCircuitBreaker`), calls
    /// fail at once with the real cause ("connection refused by host:port").
    func blocking<T: Sendable>(_ body: @escaping @Sendable (PostgresClient) async throws -> T) throws(AccountStoreError) -> T {
        switch breaker.withLockedValue({ $0.admit() }) {
        case .proceed: break
        case .refuse(let cause): throw .unavailable("PostgreSQL unreachable: \(cause)")
        case .refuseAndProbe(let cause):
            let probe = self.probe
            let breaker = self.breaker
            Task {
                let failure = await probe.reach()
                breaker.withLockedValue { $0.probed(failure: failure) }
            }
            throw .unavailable("PostgreSQL unreachable: \(cause)")
        }
        let result = NIOLockedValueBox<Result<T, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        let task = Task { [client] in
            let outcome: Result<T, any Error>
            do { outcome = .success(try await body(client)) } catch { outcome = .failure(error) }
            result.withLockedValue { $0 = outcome }
            done.signal()
        }
        if done.wait(timeout: .now() + .nanoseconds(Int(timeout.nanoseconds))) == .timedOut {
            task.cancel()
            // Refused connections leave the pool retrying and the call waiting: ask the socket.
            throw unreachable(probe.reachNow() ?? "PostgreSQL did not answer within \(timeout)")
        }
        switch result.withLockedValue({ $0 }) {
        case .success(let value):
            reached()
            return value
        case .failure(let error as AccountStoreError):
            reached()
            throw error
        case .failure(let error as PSQLError) where error.code == .server:
            reached()
            throw .unavailable(Self.describe(error))
        case .failure(let error as PSQLError): throw unreachable(Self.describe(error, endpoint: probe.endpoint))
        case .failure(let error): throw unreachable(Self.describeTLS(error))
        case nil: throw unreachable("no result")
        }
    }

    private func reached() {
        if case .becameAvailable(let cause) = breaker.withLockedValue({ $0.succeeded() }) {
            logger.notice("account store available again", metadata: ["database": "\(probe.endpoint)", "wasUnavailable": "\(cause)"])
        }
    }

    private func unreachable(_ cause: String) -> AccountStoreError {
        if case .becameUnavailable(let cause) = breaker.withLockedValue({ $0.failed(cause) }) {
            logger.warning("account store unavailable: requests are refused at once until it answers again", metadata: ["database": "\(probe.endpoint)", "cause": "\(cause)"])
        }
        return .unavailable("PostgreSQL unreachable: \(cause)")
    }
}
