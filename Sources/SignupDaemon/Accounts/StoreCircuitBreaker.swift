/// Whether calls to a remote account store go through, as a state machine that returns what
/// to do. While the server refuses connections every call fails at once (no one waits
/// `--database-timeout` for a server that is known to be down); one probe at a time asks
/// whether it is back; the first call that succeeds closes the breaker again. The state
/// changes are what the daemon logs: once when the store becomes unavailable, once when
/// it is back.
struct StoreCircuitBreaker: Sendable {
    enum State: Sendable, Equatable {
        /// Calls go through.
        case closed
        /// Calls fail at once with `cause`; `probing`: a probe is under way.
        case open(cause: String, probing: Bool)
        /// A probe reached the server: calls go through; the first result decides.
        case trial(cause: String)
    }

    /// What a caller does before a call.
    enum Admission: Equatable {
        case proceed
        /// Fail now with this cause.
        case refuse(String)
        /// Fail now with this cause, and start a probe (the caller owns it until `probed`).
        case refuseAndProbe(String)
    }

    /// What a state change asks to be logged.
    enum Change: Equatable {
        case none
        case becameUnavailable(String)
        case becameAvailable(after: String)
    }

    private(set) var state: State = .closed

    mutating func admit() -> Admission {
        switch state {
        case .closed, .trial: return .proceed
        case .open(let cause, let probing):
            if probing { return .refuse(cause) }
            state = .open(cause: cause, probing: true)
            return .refuseAndProbe(cause)
        }
    }

    /// A call reached the server (whatever the statement's own outcome).
    mutating func succeeded() -> Change {
        switch state {
        case .closed: return .none
        case .open(let cause, _), .trial(let cause):
            state = .closed
            return .becameAvailable(after: cause)
        }
    }

    /// A call could not reach the server, for `cause`.
    mutating func failed(_ cause: String) -> Change {
        switch state {
        case .closed:
            state = .open(cause: cause, probing: false)
            return .becameUnavailable(cause)
        case .trial:
            state = .open(cause: cause, probing: false)
            return .none
        case .open(_, let probing):
            state = .open(cause: cause, probing: probing)
            return .none
        }
    }

    /// The probe's answer: the server accepts connections again (`nil`) or not (its cause).
    mutating func probed(failure: String?) {
        guard case .open(let cause, _) = state else { return }
        if let failure {
            state = .open(cause: failure, probing: false)
        } else {
            state = .trial(cause: cause)
        }
    }
}
