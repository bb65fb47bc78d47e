import NIOConcurrencyHelpers

/// Lets a session abort an availability check it no longer needs (a newer value
/// superseded it): work not yet started is skipped, an HTTP request in flight is aborted.
final class CheckCancellation: Sendable {
    private struct State {
        var cancelled = false
        var timedOut = false
        var onCancel: (@Sendable () -> Void)?
    }

    private let state = NIOLockedValueBox(State())

    var isCancelled: Bool { state.withLockedValue { $0.cancelled } }

    /// Whether it was cancelled because the session's timeout ran out (the service did not
    /// answer in time: a failure to log), not because a newer value superseded it.
    var timedOut: Bool { state.withLockedValue { $0.timedOut } }

    /// `timedOut`: the session gave up waiting (its timeout), rather than no longer needing it.
    func cancel(timedOut: Bool = false) {
        let action = state.withLockedValue { state -> (@Sendable () -> Void)? in
            guard !state.cancelled else { return nil }
            state.cancelled = true
            state.timedOut = timedOut
            defer { state.onCancel = nil }
            return state.onCancel
        }
        action?()
    }

    /// Runs `action` on cancellation; at once (returning false) when already cancelled.
    @discardableResult
    func onCancel(_ action: @escaping @Sendable () -> Void) -> Bool {
        let already = state.withLockedValue { state in
            if state.cancelled { return true }
            state.onCancel = action
            return false
        }
        if already { action() }
        return !already
    }

    /// Forgets the cancellation action once the work is done.
    func clear() {
        state.withLockedValue { $0.onCancel = nil }
    }
}
