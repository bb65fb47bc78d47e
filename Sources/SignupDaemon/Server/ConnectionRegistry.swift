import NIOConcurrencyHelpers
import NIOCore

/// Process-wide bookkeeping: live connections (in total and per uid), how fast each uid
/// connects, submits in flight, and the shutdown drain. Thread-safe.
final class ConnectionRegistry: Sendable {
    private struct State {
        var connections: [ObjectIdentifier: ConnectionOutput] = [:]
        /// Each uid's connections: how many it holds, and one to displace.
        var byUID: [UInt32: Set<ObjectIdentifier>] = [:]
        var submitsInFlight = 0
        var draining = false
        /// The drain's grace period is over: waiting for submits returns at once.
        var submitWaitAbandoned = false
        var lastConnectionClosed: NIODeadline
        var submitWaiters: [CheckedContinuation<Void, Never>] = []
        var connectionWaiters: [CheckedContinuation<Void, Never>] = []
        var acceptedTotal = 0
        /// Connect budgets of uids that connected recently; nil: unlimited.
        var connects: TokenBuckets<UInt32>?

        mutating func add(_ output: ConnectionOutput, uid: UInt32) {
            let id = ObjectIdentifier(output)
            connections[id] = output
            byUID[uid, default: []].insert(id)
        }

        func held(by uid: UInt32) -> Int { byUID[uid]?.count ?? 0 }

        mutating func remove(_ id: ObjectIdentifier, uid: UInt32) {
            connections[id] = nil
            byUID[uid]?.remove(id)
            if byUID[uid]?.isEmpty == true { byUID[uid] = nil }
        }
    }

    private let state: NIOLockedValueBox<State>
    /// The time for connect budgets and how long the daemon has had no connection.
    private let clock: DaemonClock

    /// Connections held by `uid` (for tests and logs).
    func connections(of uid: UInt32) -> Int { state.withLockedValue { $0.held(by: uid) } }
    let maxConnections: Int
    let maxConnectionsPerUID: Int
    /// New connections per uid per second (bursts of twice that); nil: unlimited.
    let connectsPerUIDPerSecond: Int?
    /// Uids that could stop the daemon anyway (root, the daemon's own): not rate-limited.
    let unthrottledUIDs: Set<UInt32>

    init(maxConnections: Int, maxConnectionsPerUID: Int, connectsPerUIDPerSecond: Int? = nil, unthrottledUIDs: Set<UInt32> = [], clock: DaemonClock = .system) {
        self.clock = clock
        state = NIOLockedValueBox(State(lastConnectionClosed: clock.now(), connects: connectsPerUIDPerSecond.map { TokenBuckets(perSecond: Double($0)) }))
        self.maxConnections = maxConnections
        self.maxConnectionsPerUID = maxConnectionsPerUID
        self.connectsPerUIDPerSecond = connectsPerUIDPerSecond
        self.unthrottledUIDs = unthrottledUIDs
    }

    enum Admission {
        case admitted
        /// Admitted although the daemon was full: `victim`, a connection of the uid holding
        /// the most, is counted out and must be closed (`ConnectionOutput.end(.displaced…)`).
        case admittedDisplacing(victim: ConnectionOutput, victimUID: UInt32, held: Int)
        case tooManyConnections, tooManyForUser, connectingTooFast, draining
    }

    /// Counts a new connection in, unless a limit says no. A uid connecting faster than
    /// its budget is refused before the others are looked at: a connect flood costs the
    /// daemon as little as possible per connection. When all `maxConnections` are taken,
    /// a uid holding at least two fewer than the biggest holder is still admitted and one
    /// of the biggest holder's connections is displaced: many uids each within their
    /// per-uid limit cannot lock out everyone else (root included); the biggest pays.
    func admit(_ output: ConnectionOutput, uid: UInt32, now: NIODeadline) -> Admission {
        state.withLockedValue { state in
            if state.draining { return .draining }
            if state.connects != nil, !unthrottledUIDs.contains(uid), state.connects?.take(uid, now: now) == false {
                return .connectingTooFast
            }
            var displaced: Admission?
            if state.connections.count >= maxConnections {
                // A uid at its own limit never displaces (adopted connections may exceed it).
                guard state.held(by: uid) < maxConnectionsPerUID, let victim = Self.displaceable(for: uid, in: &state) else {
                    return .tooManyConnections
                }
                displaced = victim
            }
            if state.held(by: uid) >= maxConnectionsPerUID { return .tooManyForUser }
            state.add(output, uid: uid)
            state.acceptedTotal += 1
            return displaced ?? .admitted
        }
    }

    /// Counts out one connection of the uid holding the most, if that is at least two more
    /// than `uid` holds (two uids of about the same size do not take turns displacing).
    private static func displaceable(for uid: UInt32, in state: inout State) -> Admission? {
        let own = state.held(by: uid)
        guard let biggest = state.byUID.max(by: { $0.value.count < $1.value.count }), biggest.key != uid, biggest.value.count >= own + 2,
            let id = biggest.value.first, let victim = state.connections[id]
        else { return nil }
        state.remove(id, uid: biggest.key)
        return .admittedDisplacing(victim: victim, victimUID: biggest.key, held: biggest.value.count)
    }

    /// Counts in a connection carried over from the previous process (issue 16): it was
    /// admitted there, and refusing it now would drop a client mid-form, so no limit applies.
    func adopt(_ output: ConnectionOutput, uid: UInt32) {
        state.withLockedValue { $0.add(output, uid: uid) }
    }

    /// A connection closed (once counted out, a displaced one is not counted again).
    func remove(_ output: ConnectionOutput, uid: UInt32) {
        let waiters: [CheckedContinuation<Void, Never>] = state.withLockedValue { state in
            guard state.connections[ObjectIdentifier(output)] != nil else { return [] }
            state.remove(ObjectIdentifier(output), uid: uid)
            guard state.connections.isEmpty else { return [] }
            state.lastConnectionClosed = clock.now()
            defer { state.connectionWaiters = [] }
            return state.connectionWaiters
        }
        for waiter in waiters { waiter.resume() }
    }

    var connectionCount: Int { state.withLockedValue { $0.connections.count } }

    var isDraining: Bool { state.withLockedValue { $0.draining } }

    /// How long there has been no connection at all, or nil while there is one.
    var idleFor: TimeAmount? {
        state.withLockedValue { state in
            state.connections.isEmpty ? clock.now() - state.lastConnectionClosed : nil
        }
    }

    func submitStarted() {
        state.withLockedValue { $0.submitsInFlight += 1 }
    }

    func submitFinished() {
        let waiters: [CheckedContinuation<Void, Never>] = state.withLockedValue { state in
            state.submitsInFlight -= 1
            guard state.submitsInFlight == 0 else { return [] }
            defer { state.submitWaiters = [] }
            return state.submitWaiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Refuses new sessions and submits from now on.
    func beginDraining() {
        state.withLockedValue { $0.draining = true }
    }

    /// Returns once no signup or login is in flight.
    func waitForSubmits() async {
        await withCheckedContinuation { continuation in
            let done = state.withLockedValue { state in
                if state.submitsInFlight == 0 || state.submitWaitAbandoned { return true }
                state.submitWaiters.append(continuation)
                return false
            }
            if done { continuation.resume() }
        }
    }

    /// Lets `waitForSubmits` return, now and from now on, even though work is still
    /// running (the drain's deadline, which may come before anyone waits).
    func abandonSubmitWait() {
        let waiters: [CheckedContinuation<Void, Never>] = state.withLockedValue { state in
            state.submitWaitAbandoned = true
            defer { state.submitWaiters = [] }
            return state.submitWaiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once every connection is gone.
    func waitForConnections() async {
        await withCheckedContinuation { continuation in
            let done = state.withLockedValue { state in
                if state.connections.isEmpty { return true }
                state.connectionWaiters.append(continuation)
                return false
            }
            if done { continuation.resume() }
        }
    }

    /// Every live connection, for the shutdown `bye`.
    var allConnections: [ConnectionOutput] { state.withLockedValue { Array($0.connections.values) } }
}
