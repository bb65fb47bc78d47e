import FormEngine
import Logging
import NIOConcurrencyHelpers
import NIOCore

/// Sign-up paused by an operator (`signupctl signups pause`, issue 26): kept in the account
/// store, so that it survives restarts and every host sharing a PostgreSQL store sees it.
/// This host's copy is read on every signup (in memory); it is refreshed from the store
/// every `pollInterval` when the store is shared, and at once when this host changes it.
/// Whoever must hear of a change (the open sessions) registers with `onChange`.
final class SignupPauseState: Sendable {
    private struct State {
        var current: StoredSignupPause?
        var observers: [@Sendable (StoredSignupPause?) -> Void] = []
    }
    private let state = NIOLockedValueBox(State())
    private let store: any AccountStore
    private let logger: Logger
    private let metrics: DaemonMetrics
    /// How often a shared store is asked again: a pause on one host reaches the others
    /// within this (PROTOCOL.md promises a second).
    static let pollInterval = TimeAmount.milliseconds(500)

    init(store: any AccountStore, logger: Logger, metrics: DaemonMetrics) {
        self.store = store
        self.logger = logger
        self.metrics = metrics
    }

    /// The pause now (nil: sign-up is open); any thread.
    var current: StoredSignupPause? { state.withLockedValue { $0.current } }

    /// As a form sees it.
    var forForms: SignupPause? { current.map { SignupPause(note: $0.note) } }

    /// Calls `observer` with every change from now on (on the thread that learnt of it).
    func onChange(_ observer: @escaping @Sendable (StoredSignupPause?) -> Void) {
        state.withLockedValue { $0.observers.append(observer) }
    }

    /// Reads the store; a change is applied and announced. A store that does not answer
    /// leaves the last known state (logged).
    func refresh() async {
        do {
            apply(try await store.signupPause())
        } catch {
            logger.warning("cannot read whether sign-up is paused; keeping the last known state", metadata: ["error": "\(error)"])
        }
    }

    /// Pauses (or opens, nil) sign-up for every host: stored first, then applied here.
    func set(_ pause: StoredSignupPause?) async throws(AccountStoreError) {
        try await store.setSignupPause(pause)
        apply(pause)
    }

    private func apply(_ pause: StoredSignupPause?) {
        let observers: [@Sendable (StoredSignupPause?) -> Void]? = state.withLockedValue { state in
            guard state.current != pause else { return nil }
            state.current = pause
            return state.observers
        }
        guard let observers else { return }
        metrics.signupsPaused(pause != nil)
        if let pause {
            logger.notice("sign-up paused", metadata: ["by_uid": "\(pause.byUID)", "note": "\(pause.note ?? "")"])
        } else {
            logger.notice("sign-up open again")
        }
        for observer in observers { observer(pause) }
    }

    /// Asks a shared store again every `pollInterval`, until cancelled.
    func startPolling(on loop: EventLoop) -> RepeatedTask {
        loop.scheduleRepeatedAsyncTask(initialDelay: Self.pollInterval, delay: Self.pollInterval) { [self] _ in
            loop.makeFutureWithLoopTask { await self.refresh() }
        }
    }
}
