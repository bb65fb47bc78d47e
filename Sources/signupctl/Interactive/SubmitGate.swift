import SignupProtocol

/// Decides when the interactive form sends `submit`: exactly one per Enter, and never one
/// after the result for it arrived. A state machine that returns what to do; the loop
/// sends the request and reports its id back with `sent(_:)`.
///
/// - Enter while idle submits. Enter while a submit is unanswered, running or waiting for
///   a retry does nothing (the one Enter is already being honoured).
/// - `not_ready` for our submit while a check is still running: wait, and submit once more
///   when the daemon says `enabled` — only then, and only once.
/// - `busy` true carrying our submit's id: the daemon took it; wait for the `result`.
///   An `enabled` event that was already on its way (sent before the daemon read the
///   submit) no longer triggers anything.
/// - Any other error for our submit, a `result`, a failed check or an edit: back to idle.
struct SubmitGate: Equatable {
    enum State: Equatable {
        case idle
        /// Sent; no answer yet. `retry`: the user still wants it if the daemon says not_ready.
        case unanswered(RequestID, retry: Bool)
        /// The daemon said not_ready while checks run; submit when it says `enabled`.
        case waitingForEnabled
        /// The daemon took it (busy); the result will come.
        case running(RequestID)
    }

    enum Action: Equatable {
        case none
        case submit
        /// Tell the user we wait for the checks.
        case wait
        /// Our submit was refused or dropped; show the daemon's message.
        case refused
    }

    private(set) var state: State = .idle

    /// Whether the form has a submit outstanding (sent, running or waiting to retry).
    var pending: Bool { state != .idle }

    mutating func enter() -> Action {
        state == .idle ? .submit : .none
    }

    /// The submit went out with `id`.
    mutating func sent(_ id: RequestID) {
        state = .unanswered(id, retry: true)
    }

    /// The user edited a field: a submit not yet taken is withdrawn.
    mutating func edited() {
        switch state {
        case .idle, .running: break
        case .waitingForEnabled: state = .idle
        case .unanswered(let id, _): state = .unanswered(id, retry: false)
        }
    }

    /// An `error` event answering request `id` (nil when it answers none).
    mutating func error(code: ErrorCode?, id: RequestID?, checksRunning: Bool) -> Action {
        guard case .unanswered(let ours, let retry) = state, id == ours else { return .none }
        if code == .notReady, retry, checksRunning {
            state = .waitingForEnabled
            return .wait
        }
        state = .idle
        return .refused
    }

    /// A `busy` event; `id` is the request that caused it.
    mutating func busy(_ value: Bool, id: RequestID?) {
        if value, case .unanswered(let ours, _) = state, id == ours { state = .running(ours) }
    }

    /// An `enabled` event.
    mutating func enabled(_ value: Bool) -> Action {
        guard value, state == .waitingForEnabled else { return .none }
        return .submit
    }

    /// A check failed while we waited for `enabled`: it will not come.
    mutating func checkFailed() -> Bool {
        guard state == .waitingForEnabled else { return false }
        state = .idle
        return true
    }

    /// A `result` arrived: whatever was outstanding is over.
    mutating func result() {
        state = .idle
    }
}
