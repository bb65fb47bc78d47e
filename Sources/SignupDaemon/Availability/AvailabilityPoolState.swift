import NIOCore

/// A check the availability pool lends connections to.
protocol AvailabilityPoolCheck: Sendable {
    /// Unique among the pool's checks: the one `AvailabilityPoolState.admit` handed out.
    var id: UInt64 { get }
    /// Whose check it is: one uid's checks hold at most half the connections.
    var peer: PeerKey { get }
}

/// Why a check got no answer, as the pool and the client tell it apart: only the service's
/// own failures (`noAnswer`, `service`) count against its health.
enum AvailabilityCheckFailure: Sendable, Equatable {
    /// signupd is stopping.
    case stopping
    /// It waited its whole timeout for a connection: congestion here, not the service's fault.
    case busy
    /// It was lent a connection and the service did not answer within the timeout.
    case noAnswer
    /// The service failed it (refused, TLS, an HTTP status that is no answer…), in words for the log.
    case service(String)
}

/// The availability client's connection pool as a plain value: the client tells it each event
/// under a lock and performs the actions it returns after leaving the lock, so no channel is
/// touched, no promise completed and no task scheduled while the lock is held. `Connection`,
/// `Check` and `Timer` are whatever the caller uses: channels, pending checks and scheduled
/// tasks in the daemon, plain values in `AvailabilityPoolStateTests`.
///
/// The rules: at most `maxConnections` connections, connecting or open, for the whole daemon,
/// and at most `maxConnectionsPerUID` lent to one uid's checks. A check takes the most recently
/// parked idle connection, else opens a new one within both caps, else waits. A connection set
/// free, or the slot of one that closed, goes to the waiting check of the uid using the fewest,
/// the earliest first. A failed connection attempt turns new checks away for `failFastPeriod`;
/// a connection made ends that at once.
///
///     connecting ──connected──▶ busy ◀──leased── idle ◀──freed, reusable── busy
///         │  └──connected (TLS)──▶ handshaking ──handshake succeeded──▶ busy
///         │                            └──handshake failed──▶ closing
///         └──connect failed──▶ gone (its slot to a waiting check)
///     busy ──freed, not reusable──▶ closing        idle ──idle timer──▶ closing
///     any but connecting ──closed──▶ gone (its slot to a waiting check)
struct AvailabilityPoolState<Connection: Sendable, Check: AvailabilityPoolCheck, Timer: Sendable>: Sendable {
    typealias ConnectionID = Int

    /// One stay of a connection in the idle list: a timer armed for an earlier stay (the
    /// connection was lent and parked again since) does not close it.
    struct IdleTimer: Hashable, Sendable {
        let connection: ConnectionID
        let park: UInt64
    }

    /// The I/O an event calls for, to be performed after leaving the lock, in order.
    enum Action {
        /// Open a connection to the service; report `connected` or `connectFailed` with this id.
        case connect(ConnectionID)
        /// Wait for the new connection's TLS handshake; report `handshakeSucceeded` or `handshakeFailed`.
        case awaitHandshake(ConnectionID, Connection)
        /// Send the check's request on the connection; report `checkFinished` once its outcome
        /// is known, then `connectionFreed`.
        case send(Check, ConnectionID, Connection)
        /// End the check without an answer.
        case fail(Check, AvailabilityCheckFailure)
        /// Close the connection (its `closed` report follows).
        case close(Connection)
        /// Arm the idle timeout of a connection just parked; report `idleTimerScheduled` with
        /// the timer, and `idleTimerFired` when it fires.
        case scheduleIdleTimer(IdleTimer, Connection)
        /// Disarm an idle timeout that is no longer wanted.
        case cancelTimer(Timer)
    }

    /// Whether a new check is taken.
    enum Admission: Sendable, Equatable {
        case admitted(checkID: UInt64)
        /// signupd is stopping: nothing more is scheduled on the event loops.
        case stopping
        /// A connection attempt failed less than `failFastPeriod` ago: "Error contacting
        /// server" without connecting (already logged as unreachable).
        case failingFast
    }

    private enum Mode: Sendable {
        case running
        case failingFast(until: NIODeadline)
        /// The daemon is stopping: no new connection, no new check.
        case stopped
    }

    private enum ConnectionState: Sendable {
        /// Being opened for this check (lent to it).
        case connecting(Check)
        /// Open; its TLS handshake is under way, then it carries this check.
        case handshaking(Connection, Check)
        /// Carrying a check, or between that check's end and its release.
        case busy(Connection)
        /// Kept alive for the next check, until `idleTimeout`; `timer` once it is reported.
        case idle(Connection, park: UInt64, timer: Timer?)
        /// Closed or being closed, until its close is reported.
        case closing(Connection)

        var connection: Connection? {
            switch self {
            case .connecting: nil
            case .handshaking(let connection, _), .busy(let connection), .idle(let connection, _, _), .closing(let connection): connection
            }
        }
    }

    let maxConnections: Int
    let maxConnectionsPerUID: Int
    let failFastPeriod: TimeAmount

    private var mode = Mode.running
    private var connections: [ConnectionID: ConnectionState] = [:]
    /// Idle connections, the most recently parked last (taken first: the likeliest still open).
    private var idle: [ConnectionID] = []
    /// Checks waiting for a connection, in the order they came.
    private var waiting: [Check] = []
    /// Checks holding a connection, or one being opened for them, until they finish.
    private var lent: [UInt64: Check] = [:]
    /// How many connections each uid's checks hold (`lent` counted by uid).
    private var inUse: [PeerKey: Int] = [:]
    private var lastCheckID: UInt64 = 0
    private var lastConnectionID: ConnectionID = 0
    private var lastPark: UInt64 = 0

    init(maxConnections: Int, maxConnectionsPerUID: Int, failFastPeriod: TimeAmount) {
        self.maxConnections = maxConnections
        self.maxConnectionsPerUID = maxConnectionsPerUID
        self.failFastPeriod = failFastPeriod
    }

    /// Connections connecting or open (for tests and logs).
    var openConnections: Int { connections.count }
    /// Connections kept alive unused.
    var idleConnections: Int { idle.count }
    /// Checks waiting for a connection.
    var waitingChecks: Int { waiting.count }
    /// Connections held by `uid`'s checks.
    func connections(heldBy peer: PeerKey) -> Int { inUse[peer, default: 0] }
}

// MARK: - Checks

extension AvailabilityPoolState {
    /// A check is asked for: its id, or why it is answered "unreachable" at once.
    mutating func admit(now: NIODeadline) -> Admission {
        switch mode {
        case .stopped: return .stopping
        case .failingFast(let until) where now < until: return .failingFast
        case .running, .failingFast:
            lastCheckID += 1
            return .admitted(checkID: lastCheckID)
        }
    }

    /// An admitted check wants a connection: an idle one, a new one within the caps, or it waits.
    /// `isActive` tells an idle connection that closed, its close not reported yet, from one still open.
    mutating func lease(_ check: Check, isActive: (Connection) -> Bool) -> [Action] {
        if case .stopped = mode { return [.fail(check, .stopping)] }
        var actions: [Action] = []
        if connections(heldBy: check.peer) < maxConnectionsPerUID {
            while let id = idle.popLast() {
                guard case .idle(let connection, _, let timer) = connections[id] else { continue }
                if let timer { actions.append(.cancelTimer(timer)) }
                guard isActive(connection) else {
                    // Dropped now; its close, reported soon, frees the slot.
                    connections[id] = .closing(connection)
                    continue
                }
                connections[id] = .busy(connection)
                lend(check)
                return actions + [.send(check, id, connection)]
            }
            if connections.count < maxConnections {
                lend(check)
                return actions + [.connect(open(for: check))]
            }
        }
        waiting.append(check)
        return actions
    }

    /// A waiting check was cancelled: it leaves the queue. One holding a connection aborts
    /// its request itself (closing the connection).
    mutating func cancelWaiting(_ checkID: UInt64) -> [Action] {
        guard let index = waiting.firstIndex(where: { $0.id == checkID }) else { return [] }
        return [.fail(waiting.remove(at: index), .busy)]
    }

    /// A check's timeout ran out: waiting for a connection (it leaves the queue), or for the
    /// service's answer (its connection is set free or closed once the check has finished).
    mutating func deadlinePassed(_ checkID: UInt64) -> [Action] {
        if let index = waiting.firstIndex(where: { $0.id == checkID }) { return [.fail(waiting.remove(at: index), .busy)] }
        guard let check = lent[checkID] else { return [] }
        return [.fail(check, .noAnswer)]
    }

    /// A check that was lent a connection has its outcome: its uid's share is given back.
    /// (Before its connection is set free: the uid's own waiting check may take it next.)
    mutating func checkFinished(_ checkID: UInt64) {
        giveBack(checkID)
    }

    /// Closes every connection and ends the waiting checks: the daemon is stopping. Checks
    /// on a connection end as it closes; connections still being opened are closed when made.
    mutating func shutdown() -> [Action] {
        mode = .stopped
        var actions: [Action] = []
        for id in idle {
            guard case .idle(let connection, _, let timer) = connections[id] else { continue }
            if let timer { actions.append(.cancelTimer(timer)) }
            connections[id] = .closing(connection)
        }
        idle = []
        actions += waiting.map { .fail($0, .stopping) }
        waiting = []
        for id in connections.keys.sorted() {
            if let connection = connections[id]?.connection { actions.append(.close(connection)) }
        }
        return actions
    }
}

// MARK: - Connections

extension AvailabilityPoolState {
    /// A connection was made. `handshake`: TLS must be negotiated before it carries a request.
    mutating func connected(_ id: ConnectionID, _ connection: Connection, handshake: Bool) -> [Action] {
        guard case .connecting(let check) = connections[id] else { return [.close(connection)] }
        if case .stopped = mode {
            connections[id] = .closing(connection)
            giveBack(check.id)
            return [.close(connection), .fail(check, .stopping)]
        }
        mode = .running
        guard !handshake else {
            connections[id] = .handshaking(connection, check)
            return [.awaitHandshake(id, connection)]
        }
        connections[id] = .busy(connection)
        return [.send(check, id, connection)]
    }

    /// A connection attempt failed (refused, unreachable, timed out): new checks fail fast for
    /// a while; the slot goes to a waiting check, which tries again.
    mutating func connectFailed(_ id: ConnectionID, cause: String, now: NIODeadline) -> [Action] {
        guard case .connecting(let check) = connections[id] else { return [] }
        connections[id] = nil
        if case .stopped = mode {} else { mode = .failingFast(until: now + failFastPeriod) }
        // The failed check's share comes back first, so that its peer's own waiting check
        // may take the slot (otherwise it waited out its timeout with the pool empty).
        giveBack(check.id)
        return passSlot() + [.fail(check, .service(cause))]
    }

    /// The TLS handshake succeeded and the certificate names the host: the check's request
    /// goes out (after a stop, the check ends instead).
    mutating func handshakeSucceeded(_ id: ConnectionID) -> [Action] {
        guard case .handshaking(let connection, let check) = connections[id] else { return [] }
        guard !isStopped else {
            // The stop closed it already: its check ends as stopping, not as the service failing.
            connections[id] = .closing(connection)
            giveBack(check.id)
            return [.fail(check, .stopping)]
        }
        connections[id] = .busy(connection)
        return [.send(check, id, connection)]
    }

    /// The TLS handshake failed: the connection closes and the check fails with the reason.
    mutating func handshakeFailed(_ id: ConnectionID, cause: String) -> [Action] {
        guard case .handshaking(let connection, let check) = connections[id] else { return [] }
        connections[id] = .closing(connection)
        giveBack(check.id)
        return [.close(connection), .fail(check, .service(cause))]
    }

    /// A check on the connection has finished: a `reusable` connection (the whole response
    /// read, still open) goes to a waiting check or is parked; any other closes.
    mutating func connectionFreed(_ id: ConnectionID, reusable: Bool) -> [Action] {
        guard case .busy(let connection) = connections[id] else { return [] }
        guard reusable, !isStopped else {
            connections[id] = .closing(connection)
            return [.close(connection)]
        }
        if let check = nextWaiting() { return [.send(check, id, connection)] }
        lastPark += 1
        connections[id] = .idle(connection, park: lastPark, timer: nil)
        idle.append(id)
        return [.scheduleIdleTimer(IdleTimer(connection: id, park: lastPark), connection)]
    }

    /// The idle timeout asked for by `scheduleIdleTimer` is armed: kept to be disarmed if the
    /// connection is lent or closes first, or disarmed at once if it was already.
    mutating func idleTimerScheduled(_ key: IdleTimer, _ timer: Timer) -> [Action] {
        guard case .idle(let connection, let park, nil) = connections[key.connection], park == key.park else { return [.cancelTimer(timer)] }
        connections[key.connection] = .idle(connection, park: park, timer: timer)
        return []
    }

    /// A connection waited `idleTimeout` unused: taken out of the pool, then closed (the
    /// service or a middlebox may have dropped it silently meanwhile).
    mutating func idleTimerFired(_ key: IdleTimer) -> [Action] {
        guard case .idle(let connection, let park, _) = connections[key.connection], park == key.park else { return [] }
        idle.removeAll { $0 == key.connection }
        connections[key.connection] = .closing(connection)
        return [.close(connection)]
    }

    /// A connection closed, whoever closed it: its slot goes to a waiting check.
    mutating func closed(_ id: ConnectionID) -> [Action] {
        var actions: [Action] = []
        var failed: Check?
        switch connections[id] {
        case nil, .connecting:
            // Unknown (reported twice), or not open yet: its attempt reports how it ended.
            return []
        case .idle(_, _, let timer):
            idle.removeAll { $0 == id }
            if let timer { actions.append(.cancelTimer(timer)) }
        case .handshaking(_, let check):
            // The handshake's failure is reported first; should the close come first, the
            // check fails here and that report finds nothing left to do.
            failed = check
        case .busy, .closing:
            break
        }
        connections[id] = nil
        actions += passSlot()
        if let failed {
            giveBack(failed.id)
            actions.append(.fail(failed, .service(AvailabilityFailure.describe(AvailabilityFailure.ClosedDuringHandshake()))))
        }
        return actions
    }
}

// MARK: - Bookkeeping

extension AvailabilityPoolState {
    private var isStopped: Bool {
        if case .stopped = mode { return true }
        return false
    }

    private mutating func lend(_ check: Check) {
        lent[check.id] = check
        inUse[check.peer, default: 0] += 1
    }

    private mutating func giveBack(_ checkID: UInt64) {
        guard let check = lent.removeValue(forKey: checkID), let count = inUse[check.peer] else { return }
        inUse[check.peer] = count > 1 ? count - 1 : nil
    }

    /// A new connection, being opened for `check`.
    private mutating func open(for check: Check) -> ConnectionID {
        lastConnectionID += 1
        connections[lastConnectionID] = .connecting(check)
        return lastConnectionID
    }

    /// The slot of a connection that is gone, to a waiting check: a new connection for it.
    private mutating func passSlot() -> [Action] {
        guard !isStopped, let check = nextWaiting() else { return [] }
        return [.connect(open(for: check))]
    }

    /// The waiting check a freed connection goes to: of the uids below `maxConnectionsPerUID`,
    /// the one using the fewest, its earliest check; lent to it.
    private mutating func nextWaiting() -> Check? {
        var best: (index: Int, using: Int)?
        for (index, check) in waiting.enumerated() {
            let using = connections(heldBy: check.peer)
            guard using < maxConnectionsPerUID, using < (best?.using ?? Int.max) else { continue }
            best = (index, using)
            if using == 0 { break }
        }
        guard let best else { return nil }
        let check = waiting.remove(at: best.index)
        lend(check)
        return check
    }
}

extension AvailabilityPoolState.Action: Equatable where Connection: Equatable, Check: Equatable, Timer: Equatable {}
