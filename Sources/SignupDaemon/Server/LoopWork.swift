import NIOCore
import Synchronization

/// What connections on other loops ask of sessions on this one (a view's request to the
/// session it attached to, a connection's close unsubscribing it), handled within the asking
/// uid's share of this loop (`FairTurns`), like its requests on its own loop.
///
/// Without it each such request was a task of its own, and NIO runs every queued task before
/// it polls again: three uids with 110 sessions × 8 views asking for locale changes (each a
/// snapshot to nine connections) kept the loop from everyone's input for hundreds of ms
/// (issue 27's fresh eyes, helper-22), though each uid's reading was within its share.
///
/// Work is queued per uid from any thread; one task on the loop takes what was queued and
/// runs each uid's work in the order it was posted, as far as the uid's share goes; the rest
/// waits for the uid's next turn.
final class LoopWork: @unchecked Sendable {
    let eventLoop: EventLoop
    private let turnsByLoop: FairTurnsByLoop

    private struct Posted {
        var work: [(peer: PeerKey, body: @Sendable () -> Void)] = []
        /// A task to take `work` is queued on the loop.
        var scheduled = false
    }
    private let posted = Mutex(Posted())

    /// Taken from `posted`, not yet run, per uid (loop only).
    private var backlog: [PeerKey: [@Sendable () -> Void]] = [:]
    /// Uids whose backlog waits for their next turn, each with the token `FairTurns` knows
    /// it by (loop only).
    private var waiting: [PeerKey: Token] = [:]
    private final class Token {}

    init(eventLoop: EventLoop, turns: FairTurnsByLoop) {
        self.eventLoop = eventLoop
        self.turnsByLoop = turns
    }

    /// Runs `body` on this loop for `peer`, within its share, after what `peer` posted before.
    func post(for peer: PeerKey, _ body: @escaping @Sendable () -> Void) {
        let first = posted.withLock { posted in
            posted.work.append((peer, body))
            defer { posted.scheduled = true }
            return !posted.scheduled
        }
        if first { eventLoop.execute { self.take() } }
    }

    /// Work posted and not run yet (for tests). Loop only.
    var pending: Int {
        eventLoop.preconditionInEventLoop()
        return backlog.values.reduce(0) { $0 + $1.count }
    }

    private func take() {
        eventLoop.preconditionInEventLoop()
        let work = posted.withLock { posted in
            defer {
                posted.work.removeAll(keepingCapacity: true)
                posted.scheduled = false
            }
            return posted.work
        }
        var peers: [PeerKey] = []
        for (peer, body) in work {
            if backlog[peer] == nil { peers.append(peer) }
            backlog[peer, default: []].append(body)
        }
        // A uid waiting for its turn is served then, in its place.
        for peer in peers where waiting[peer] == nil { serve(peer) }
    }

    private func serve(_ peer: PeerKey) {
        guard var work = backlog[peer], !work.isEmpty else {
            backlog[peer] = nil
            return
        }
        let turns = turnsByLoop.turns(on: eventLoop)
        let share = turns.share(of: peer, upTo: work.count)
        var handled = 0
        while handled < work.count, share.allows(handled) {
            work[handled]()
            handled += 1
        }
        turns.spend(share, lines: handled)
        // What ran may have posted more for this uid (taken by a later task): keep its order.
        work.removeFirst(handled)
        backlog[peer] = work.isEmpty ? nil : work
        guard !work.isEmpty else { return }
        let token = waiting[peer] ?? Token()
        waiting[peer] = token
        turns.waitForTurn(ObjectIdentifier(token), peer: peer) { [self] in
            waiting[peer] = nil
            serve(peer)
        }
    }
}
