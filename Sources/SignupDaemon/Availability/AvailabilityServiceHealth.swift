import NIOCore

/// Whether the availability service answers, so that its failures are logged once when it
/// stops answering (with the reason), once more for each new reason while it does not
/// answer, and once when it answers again — not once per keystroke. A service that fails
/// again within `quietPeriod` of answering again (it answers some checks and not others,
/// e.g. under one user's burst) is logged once as answering intermittently, and its further
/// changes are not logged until the period has passed.
struct AvailabilityServiceHealth: Sendable, Equatable {
    enum Action: Sendable, Equatable {
        case none
        /// It stopped answering: log the cause (warning).
        case logUnreachable(cause: String)
        /// Still not answering, for a reason not yet logged in this outage (warning).
        case logCauseChanged(cause: String, was: String)
        /// It answers again; `cause` is the latest reason it did not (notice).
        case logAnswering(wasUnreachable: String)
        /// It failed again soon after answering again (warning, once per quiet period).
        case logIntermittent(cause: String)
    }

    var quietPeriod = TimeAmount.seconds(60)
    /// The cause of the latest failure while it does not answer; nil while it answers.
    private(set) var failing: String?
    /// The causes logged since it stopped answering.
    private var logged: Set<String> = []
    /// When it was last logged as answering again.
    private var recovered: NIODeadline?
    /// Within the quiet period after `recovered`: changes are not logged.
    private var flapping = false

    /// A check got an answer (404 or 2xx).
    mutating func answered(at now: NIODeadline) -> Action {
        guard let cause = failing else { return .none }
        failing = nil
        logged = []
        if flapping, let recovered, now - recovered < quietPeriod { return .none }
        flapping = false
        recovered = now
        return .logAnswering(wasUnreachable: cause)
    }

    /// A check got none (a superseded one is neither; a timed-out one is a failure).
    mutating func failed(_ cause: String, at now: NIODeadline) -> Action {
        guard let was = failing else {
            failing = cause
            logged = [cause]
            if let recovered, now - recovered < quietPeriod {
                defer { flapping = true }
                return flapping ? .none : .logIntermittent(cause: cause)
            }
            flapping = false
            return .logUnreachable(cause: cause)
        }
        failing = cause
        guard !flapping, logged.insert(cause).inserted else { return .none }
        return .logCauseChanged(cause: cause, was: was)
    }
}
