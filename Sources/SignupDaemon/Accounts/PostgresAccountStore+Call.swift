import NIOConcurrencyHelpers
import NIOCore
import PostgresNIO

/// How every statement of the store runs: refused at once while the server is known to be
/// unreachable, given up after `timeout`, and any failure turned into an `AccountStoreError`
/// whose cause an administrator can act on.
extension PostgresAccountStore {
    /// Runs `body`, at most `timeout`; any failure is the store being unavailable. While the
    /// server cannot be reached (`StoreCircuitBreaker`), calls fail at once with the real
    /// cause ("connection refused by host:port").
    func call<T: Sendable>(_ body: @escaping @Sendable (PostgresClient) async throws -> T) async throws(AccountStoreError) -> T {
        switch breaker.withLockedValue({ $0.admit() }) {
        case .proceed: break
        case .refuse(let cause): throw .unavailable("PostgreSQL unreachable: \(cause)")
        case .refuseAndProbe(let cause):
            let probe = self.probe
            let breaker = self.breaker
            // The caller is refused now; the probe outlives the call.
            Task {
                let failure = await probe.reach()
                breaker.withLockedValue { $0.probed(failure: failure) }
            }
            throw .unavailable("PostgreSQL unreachable: \(cause)")
        }
        let client = self.client
        guard let outcome = await withDeadline({ try await body(client) }) else {
            // Refused connections leave the pool retrying and the call waiting: ask the socket.
            throw unreachable(await probe.reachAfterTimeout() ?? "PostgreSQL did not answer within \(timeout)")
        }
        switch outcome {
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
        }
    }

    /// `body`'s outcome, or nil when `timeout` passed first. The caller is answered at the
    /// deadline even when `body` is not: postgres-nio gives up waiting for a connection when
    /// cancelled, but not a statement the server has stopped answering, so `body` runs in a
    /// task of its own, cancelled at the deadline, that ends when its connection does
    /// (`statement_timeout`, or the socket closing).
    private func withDeadline<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) async -> Result<T, any Error>? {
        let promise = timers.any().makePromise(of: Result<T, any Error>?.self)
        let work = Task {
            do { promise.succeed(.success(try await body())) } catch { promise.succeed(.failure(error)) }
        }
        // Whichever comes second finds the promise completed and changes nothing.
        let deadline = promise.futureResult.eventLoop.scheduleTask(in: .nanoseconds(timeout.nanoseconds)) {
            promise.succeed(nil)
            work.cancel()
        }
        defer { deadline.cancel() }
        return (try? await promise.futureResult.get()) ?? nil
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
