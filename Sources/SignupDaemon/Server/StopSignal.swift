import NIOConcurrencyHelpers

/// Why the server stops serving.
enum StopReason: Sendable, Equatable {
    case shutdown
    case idle
    /// The restart signal (issue 16): hand sessions and connections to the next process.
    case handover
}

/// A one-shot signal: the first `fire` wins, `wait` returns its reason.
final class StopSignal: Sendable {
    private struct State {
        var reason: StopReason?
        var waiters: [CheckedContinuation<StopReason, Never>] = []
    }

    private let state = NIOLockedValueBox(State())

    func fire(_ reason: StopReason) {
        let waiters: [CheckedContinuation<StopReason, Never>] = state.withLockedValue { state in
            guard state.reason == nil else { return [] }
            state.reason = reason
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume(returning: reason) }
    }

    func wait() async -> StopReason {
        await withCheckedContinuation { continuation in
            let reason: StopReason? = state.withLockedValue { state in
                if let reason = state.reason { return reason }
                state.waiters.append(continuation)
                return nil
            }
            if let reason { continuation.resume(returning: reason) }
        }
    }
}
