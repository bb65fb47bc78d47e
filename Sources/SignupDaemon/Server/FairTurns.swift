import NIOConcurrencyHelpers
import NIOCore

/// Shares one event loop's request handling between the uids it serves, not between their
/// connections. In each turn a uid's connections together may handle `linesPerUIDPerTurn`
/// request lines or spend `timePerUIDPerTurn` handling them, whichever comes first, however
/// many connections the uid opens. A connection whose uid has used its share waits (its
/// reading paused once 1 KiB waits, `ConnectionStateMachine.readAheadBytes`) for the next
/// turn, which serves the waiting connections uid by uid in
/// rotation; between turns the loop polls, so another uid's request is handled at once.
/// One uid's flood costs everyone else at most one share of its work per turn.
///
/// Confined to its event loop (checked); every connection on the loop uses the loop's one.
final class FairTurns {
    let eventLoop: EventLoop
    let linesPerUIDPerTurn: Int
    let timePerUIDPerTurn: TimeAmount
    /// The pause between the end of a turn and the next: the loop's poll runs in it.
    let turnInterval: TimeAmount
    /// When shares are renewed (virtual in tests).
    private let clock: DaemonClock
    /// What handling costs: real time, also in tests (where the work is not the subject,
    /// a test can stop it, and only lines count).
    private let workClock: @Sendable () -> NIODeadline

    /// What a uid may still handle in this turn.
    struct Share {
        fileprivate let peer: PeerKey
        fileprivate let lines: Int
        fileprivate let until: NIODeadline
        fileprivate let started: NIODeadline
        fileprivate let workClock: @Sendable () -> NIODeadline

        /// Whether one more line fits, `handled` lines in.
        func allows(_ handled: Int) -> Bool {
            handled < lines && (handled == 0 || workClock() < until)
        }
    }

    private struct Spent {
        var lines = 0
        var time = TimeAmount.zero
    }

    private struct Waiting {
        let connection: ObjectIdentifier
        let resume: () -> Void
    }

    private var spent: [PeerKey: Spent] = [:]
    /// Connections waiting for the next turn, per uid, in the order they began to wait.
    private var waiting: [PeerKey: [Waiting]] = [:]
    /// Uids with waiting connections, in the order the next turn serves them.
    private var rotation: [PeerKey] = []
    private var queued: Set<ObjectIdentifier> = []
    private var turnDue = false
    /// Inside `turn()`: the shares are being used, however long that takes.
    private var serving = false
    /// Something was spent and the loop has not polled since: the task that clears this is
    /// queued. NIO runs queued tasks only once it has handled every I/O event its poll
    /// returned, so while this is set the shares are not renewed without a turn.
    private var spentSincePoll = false
    private var sharesRenewed: NIODeadline

    init(
        eventLoop: EventLoop, linesPerUIDPerTurn: Int, timePerUIDPerTurn: TimeAmount, turnInterval: TimeAmount, clock: DaemonClock,
        workClock: @escaping @Sendable () -> NIODeadline = { .now() }
    ) {
        self.eventLoop = eventLoop
        self.linesPerUIDPerTurn = linesPerUIDPerTurn
        self.timePerUIDPerTurn = timePerUIDPerTurn
        self.turnInterval = turnInterval
        self.clock = clock
        self.workClock = workClock
        sharesRenewed = clock.now()
    }

    /// What `uid`'s connection may handle now: at most `lines`, within the uid's share.
    func share(of peer: PeerKey, upTo lines: Int) -> Share {
        eventLoop.preconditionInEventLoop()
        // Nobody has waited since the last turn, the loop has polled since anything was
        // spent, and a turn's time has passed: the shares are whole again (without a timer
        // while nobody waits). Time alone is not enough: in one batch of I/O events, a uid
        // whose requests each took a little less than its share (a `sessions` page in a
        // debug build: 1.7 ms of 2) found it renewed at each of its connections, and the
        // loop served 33 of them, 55 ms, before it polled and accepted anyone else.
        if !turnDue, !serving, !spentSincePoll, clock.now() - sharesRenewed >= turnInterval {
            spent.removeAll(keepingCapacity: true)
            sharesRenewed = clock.now()
        }
        let now = workClock()
        let lines = min(lines, linesLeft(peer))
        return Share(peer: peer, lines: lines, until: now + (timePerUIDPerTurn - (spent[peer]?.time ?? .zero)), started: now, workClock: workClock)
    }

    /// Counts what a connection handled with its share. A uid that has used its share
    /// waits for the next turn, with a poll before it, even when none of its connections
    /// has a line left: without that, a uid sending one costly request on each of many
    /// connections found its share renewed by the next one (a turn's time had passed —
    /// inside its own previous request) and was served without end in one loop iteration.
    func spend(_ share: Share, lines: Int) {
        guard lines > 0 else { return }
        var used = spent[share.peer] ?? Spent()
        used.lines += lines
        used.time = used.time + (workClock() - share.started)
        spent[share.peer] = used
        if !spentSincePoll {
            spentSincePoll = true
            eventLoop.assumeIsolated().execute { [self] in spentSincePoll = false }
        }
        guard linesLeft(share.peer) == 0, !turnDue else { return }
        turnDue = true
        if !serving { armTurn() }
    }

    /// Has `resume` run in the next turn, in `uid`'s place of the rotation (once, however
    /// often a connection asks before then).
    func waitForTurn(_ connection: ObjectIdentifier, peer: PeerKey, resume: @escaping () -> Void) {
        eventLoop.preconditionInEventLoop()
        guard queued.insert(connection).inserted else { return }
        if waiting[peer] == nil { rotation.append(peer) }
        waiting[peer, default: []].append(Waiting(connection: connection, resume: resume))
        guard !turnDue else { return }
        turnDue = true
        // Asked during a turn: the next one is timed from this one's end.
        if !serving { armTurn() }
    }

    /// Connections waiting now (for tests).
    var waitingConnections: Int { queued.count }

    /// A delay, not `execute`, and counted from the end of the last turn: NIO runs due
    /// tasks until none is left before it polls again, and the poll is what lets the other
    /// uids' input in. (Timed from a turn's start, the next turn would be due before a long
    /// one ended, and turns would follow each other with no poll between them.)
    private func armTurn() {
        eventLoop.assumeIsolated().scheduleTask(in: turnInterval) { [self] in turn() }
    }

    /// Serves the waiting connections, uid by uid: each uid's in the order they waited,
    /// until its share is used. A connection that still has lines asks again (for the
    /// turn after), behind those of its uid that were not reached this time.
    private func turn() {
        turnDue = false
        serving = true
        defer {
            serving = false
            if turnDue { armTurn() }
        }
        spent.removeAll(keepingCapacity: true)
        sharesRenewed = clock.now()
        let order = rotation
        let lines = waiting
        rotation.removeAll(keepingCapacity: true)
        waiting.removeAll(keepingCapacity: true)
        for peer in order {
            var line = lines[peer] ?? []
            var next = 0
            while next < line.count, linesLeft(peer) > 0 {
                let connection = line[next]
                next += 1
                queued.remove(connection.connection)
                connection.resume()
            }
            line.removeFirst(next)
            guard !line.isEmpty else { continue }
            // Not reached: first in the peer's line next time.
            if waiting[peer] == nil { rotation.append(peer) }
            waiting[peer] = line + (waiting[peer] ?? [])
            turnDue = true
        }
    }

    /// Lines `uid` may still handle in this turn: none once its lines or its time are spent.
    private func linesLeft(_ peer: PeerKey) -> Int {
        let used = spent[peer] ?? Spent()
        return used.time < timePerUIDPerTurn ? max(0, linesPerUIDPerTurn - used.lines) : 0
    }
}

/// The `FairTurns` of every event loop, made on first use.
final class FairTurnsByLoop: Sendable {
    let linesPerUIDPerTurn: Int
    let timePerUIDPerTurn: TimeAmount
    let turnInterval: TimeAmount
    private let clock: DaemonClock
    private let workClock: @Sendable () -> NIODeadline
    private let byLoop = NIOLockedValueBox([ObjectIdentifier: NIOLoopBound<FairTurns>]())

    /// Defaults: a uid's share of a turn is 2 ms or 256 lines, and the loop polls for 100 µs
    /// between turns (BENCHMARKS.md and ROBUSTNESS.md have the measurements).
    init(
        linesPerUIDPerTurn: Int = 256, timePerUIDPerTurn: TimeAmount = .milliseconds(2), turnInterval: TimeAmount = .microseconds(100),
        clock: DaemonClock, workClock: @escaping @Sendable () -> NIODeadline = { .now() }
    ) {
        self.linesPerUIDPerTurn = linesPerUIDPerTurn
        self.timePerUIDPerTurn = timePerUIDPerTurn
        self.turnInterval = turnInterval
        self.clock = clock
        self.workClock = workClock
    }

    /// The loop's turns; call on that loop.
    func turns(on eventLoop: EventLoop) -> FairTurns {
        eventLoop.preconditionInEventLoop()
        return byLoop.withLockedValue { byLoop in
            if let turns = byLoop[ObjectIdentifier(eventLoop)] { return turns.value }
            let turns = FairTurns(
                eventLoop: eventLoop, linesPerUIDPerTurn: linesPerUIDPerTurn, timePerUIDPerTurn: timePerUIDPerTurn,
                turnInterval: turnInterval, clock: clock, workClock: workClock
            )
            byLoop[ObjectIdentifier(eventLoop)] = NIOLoopBound(turns, eventLoop: eventLoop)
            return turns
        }
    }

    private let workByLoop = NIOLockedValueBox([ObjectIdentifier: LoopWork]())

    /// The loop's queue of work other loops ask of it for a uid (`LoopWork`); from any thread.
    func work(on eventLoop: EventLoop) -> LoopWork {
        workByLoop.withLockedValue { byLoop in
            if let work = byLoop[ObjectIdentifier(eventLoop)] { return work }
            let work = LoopWork(eventLoop: eventLoop, turns: self)
            byLoop[ObjectIdentifier(eventLoop)] = work
            return work
        }
    }
}
