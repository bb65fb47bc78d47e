import NIOConcurrencyHelpers

/// Requests wait for the end of the start (issue 29, the cold start). The socket is served
/// as soon as the forms and the event loops are ready, so a client is greeted (`hello`)
/// while the account store is still being opened beside it (`OpeningAccountStore`), the
/// sign-up pause read and the sessions of a restart restored; a connection greeted before
/// that is paused, and its requests are handled, in order, once the gate opens.
final class StartGate: Sendable {
    private enum State {
        case closed(waiting: [@Sendable () -> Void])
        case open
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

    /// Has `resume` run (on the thread that opens the gate) once requests may be handled;
    /// false, and it never runs, when they may already.
    func whenOpen(_ resume: @escaping @Sendable () -> Void) -> Bool {
        state.withLockedValue { state in
            switch state {
            case .open:
                return false
            case .closed(var waiting):
                waiting.append(resume)
                state = .closed(waiting: waiting)
                return true
            }
        }
    }

    /// Opens the gate and resumes whoever waited; once.
    func open() {
        let waiting: [@Sendable () -> Void] = state.withLockedValue { state in
            guard case .closed(let waiting) = state else { return [] }
            state = .open
            return waiting
        }
        for resume in waiting { resume() }
    }
}
