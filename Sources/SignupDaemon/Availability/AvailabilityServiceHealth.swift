/// Whether the availability service answers, so that its failures are logged once when it
/// stops answering (with the reason), once more for each new reason while it does not
/// answer, and once when it answers again — not once per keystroke.
struct AvailabilityServiceHealth: Sendable, Equatable {
    enum Action: Sendable, Equatable {
        case none
        /// It stopped answering: log the cause (warning).
        case logUnreachable(cause: String)
        /// Still not answering, for a reason not yet logged in this outage (warning).
        case logCauseChanged(cause: String, was: String)
        /// It answers again; `cause` is the latest reason it did not (notice).
        case logAnswering(wasUnreachable: String)
    }

    /// The cause of the latest failure while it does not answer; nil while it answers.
    private(set) var failing: String?
    /// The causes logged since it stopped answering.
    private var logged: Set<String> = []

    /// A check got an answer (404 or 2xx).
    mutating func answered() -> Action {
        guard let cause = failing else { return .none }
        failing = nil
        logged = []
        return .logAnswering(wasUnreachable: cause)
    }

    /// A check got none (a superseded one is neither; a timed-out one is a failure).
    mutating func failed(_ cause: String) -> Action {
        guard let was = failing else {
            failing = cause
            logged = [cause]
            return .logUnreachable(cause: cause)
        }
        failing = cause
        guard logged.insert(cause).inserted else { return .none }
        return .logCauseChanged(cause: cause, was: was)
    }
}
