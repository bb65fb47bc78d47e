import NIOConcurrencyHelpers

/// Requests wait for the end of the start (issue 29, the cold start). The socket is served
/// as soon as the forms and the event loops are ready, so a client is greeted (`hello`)
/// while the account store is still being opened beside it (`OpeningAccountStore`), the
/// sign-up pause read and the sessions of a restart restored; a connection greeted before
/// that is paused, and its requests are handled, in order, once the gate opens. Should the
/// start fail instead, every connection waiting, and any greeted later (one the kernel had
/// queued, or NIO was admitting), is told so and closed at once: none waits for a start that
/// will not come, and none keeps the failed process alive.
final class StartGate: Sendable {
    /// How a wait ended.
    enum Outcome: Sendable {
        case opened
        case failed
    }

    private enum State {
        case closed(waiting: [@Sendable (Outcome) -> Void])
        case open
        case failed
    }

    private let state: NIOLockedValueBox<State>

    /// Open from the start unless `closed` (tests and starts with nothing to wait for).
    init(closed: Bool = false) {
        state = NIOLockedValueBox(closed ? .closed(waiting: []) : .open)
    }

    /// Whether requests may be handled.
    var isOpen: Bool {
        state.withLockedValue { state in
            if case .open = state { true } else { false }
        }
    }

    /// Has `resume` run (on the thread that opens or fails the gate) once the start has
    /// ended; nil if it has already, with how (`resume` then never runs).
    func whenStarted(_ resume: @escaping @Sendable (Outcome) -> Void) -> Outcome? {
        state.withLockedValue { state in
            switch state {
            case .open:
                return .opened
            case .failed:
                return .failed
            case .closed(var waiting):
                waiting.append(resume)
                state = .closed(waiting: waiting)
                return nil
            }
        }
    }

    /// Opens the gate and resumes whoever waited; once.
    func open() { end(.opened) }

    /// The start failed: whoever waited, and whoever comes, hears so.
    func fail() { end(.failed) }

    private func end(_ outcome: Outcome) {
        let waiting: [@Sendable (Outcome) -> Void] = state.withLockedValue { state in
            guard case .closed(let waiting) = state else { return [] }
            state = outcome == .opened ? .open : .failed
            return waiting
        }
        for resume in waiting { resume(outcome) }
    }
}
