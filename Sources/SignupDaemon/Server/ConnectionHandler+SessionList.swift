import NIOCore
import SignupProtocol

/// `sessions`: a page of the caller's own sessions, or with `all` of everyone's
/// (administrators), oldest first.
extension ConnectionHandler {
    func listSessions(_ page: SessionsPage, all: Bool, id: RequestID?, output: ConnectionOutput) throws(RequestFailure) {
        if all, !isAdministrator(output) { throw .administratorsOnly("sessions with \"all\"") }
        // A bigger page is more work: it costs more of the request budget (and, as any
        // request, its time counts against the uid's share of the loop, `FairTurns`).
        try spend(cost: page.budgetCost)
        var cursor: SessionCursor?
        if let after = page.after {
            guard let parsed = SessionCursor(wire: after) else { throw .invalidCursor }
            cursor = parsed
        }
        let directory = shared.services.directory
        let now = shared.services.clock.now()
        // Only the caller's own (uid, and a front end's client), unless `all`: other users'
        // sessions are neither listed nor walked, and a cursor places the caller in their
        // own list only.
        let (summaries, next) = all
            ? directory.allSummaries(after: cursor, limit: page.size, now: now)
            : directory.summaries(ownedBy: output.principal.owner, after: cursor, limit: page.size, now: now)
        output.deliver(.sessionList(sessions: summaries, next: next?.wire, id: id))
    }
}

extension SessionsPage {
    /// Tokens of the request budget a page costs: one per `defaultLimit` sessions it may hold.
    var budgetCost: Int { (size + Self.defaultLimit - 1) / Self.defaultLimit }
}
