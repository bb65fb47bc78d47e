import NIOConcurrencyHelpers
import NIOCore

/// Process-wide bookkeeping: live connections (in total and per uid), how fast each uid
/// connects, submits in flight, and the shutdown drain. Thread-safe.
final class ConnectionRegistry: Sendable {
    private struct State {
        var connections: [ObjectIdentifier: ConnectionOutput] = [:]
        /// Each peer's connections (a uid, or a front end's client): how many it holds, and one to displace.
        var byKey: [PeerKey: Set<ObjectIdentifier>] = [:]
        /// Connections per uid, its named clients' included (a front end's site-wide ceiling).
        var byUID: [UInt32: Int] = [:]
        var submitsInFlight = 0
        var draining = false
        /// The drain's grace period is over: waiting for submits returns at once.
        var submitWaitAbandoned = false
        var lastConnectionClosed: NIODeadline
        var submitWaiters: [CheckedContinuation<Void, Never>] = []
        var connectionWaiters: [CheckedContinuation<Void, Never>] = []
        var acceptedTotal = 0
        /// The most connections since the memory-return look last took it.
        var mostSinceLook = 0
        /// Connect budgets of peers that connected recently; nil: unlimited.
        var connects: TokenBuckets<PeerKey>?

        mutating func add(_ output: ConnectionOutput, key: PeerKey) {
            let id = ObjectIdentifier(output)
            connections[id] = output
            mostSinceLook = max(mostSinceLook, connections.count)
            byKey[key, default: []].insert(id)
            byUID[key.uid, default: 0] += 1
        }

        func held(by key: PeerKey) -> Int { byKey[key]?.count ?? 0 }
        func held(byUID uid: UInt32) -> Int { byUID[uid] ?? 0 }

        mutating func remove(_ id: ObjectIdentifier, key: PeerKey) {
            connections[id] = nil
            guard byKey[key]?.remove(id) != nil else { return }
            if byKey[key]?.isEmpty == true { byKey[key] = nil }
            byUID[key.uid, default: 1] -= 1
            if byUID[key.uid] == 0 { byUID[key.uid] = nil }
        }

        /// Counts a connection under its named client instead of its uid.
        mutating func move(_ id: ObjectIdentifier, from old: PeerKey, to new: PeerKey) {
            guard byKey[old]?.remove(id) != nil else { return }
            if byKey[old]?.isEmpty == true { byKey[old] = nil }
            byKey[new, default: []].insert(id)
        }
    }

    private let state: NIOLockedValueBox<State>
    /// The time for connect budgets and how long the daemon has had no connection.
    private let clock: DaemonClock

    /// Connections held by `uid` itself (for tests and logs).
    func connections(of uid: UInt32) -> Int { state.withLockedValue { $0.held(by: PeerKey(uid: uid)) } }
    /// Connections counted under `key` (for tests).
    func connections(of key: PeerKey) -> Int { state.withLockedValue { $0.held(by: key) } }
    let maxConnections: Int
    let maxConnectionsPerUID: Int
    /// Connections one client of a trusted front end may hold.
    let maxConnectionsPerClient: Int
    /// All connections of a trusted front end's uid together: its site-wide ceiling.
    let maxConnectionsPerBridge: Int
    /// New connections per uid, or per named client, per second (bursts of twice that); nil: unlimited.
    let connectsPerUIDPerSecond: Int?
    /// Uids that could stop the daemon anyway (root, the daemon's own): not rate-limited.
    let unthrottledUIDs: Set<UInt32>

    init(
        maxConnections: Int, maxConnectionsPerUID: Int, maxConnectionsPerClient: Int? = nil, maxConnectionsPerBridge: Int? = nil,
        connectsPerUIDPerSecond: Int? = nil, unthrottledUIDs: Set<UInt32> = [], clock: DaemonClock = .system
    ) {
        self.clock = clock
        state = NIOLockedValueBox(State(lastConnectionClosed: clock.now(), connects: connectsPerUIDPerSecond.map { TokenBuckets(perSecond: Double($0)) }))
        self.maxConnections = maxConnections
        self.maxConnectionsPerUID = maxConnectionsPerUID
        self.maxConnectionsPerClient = maxConnectionsPerClient ?? maxConnectionsPerUID
        self.maxConnectionsPerBridge = maxConnectionsPerBridge ?? maxConnections
        self.connectsPerUIDPerSecond = connectsPerUIDPerSecond
        self.unthrottledUIDs = unthrottledUIDs
    }

    enum Admission {
        case admitted
        /// Admitted although the daemon was full: `victim`, a connection of the peer holding
        /// the most, is counted out and must be closed (`ConnectionOutput.end(.displaced…)`).
        case admittedDisplacing(victim: ConnectionOutput, victimKey: PeerKey, held: Int)
        case tooManyConnections, tooManyForUser, connectingTooFast, draining
    }

    /// Counts a new connection in, unless a limit says no. A uid connecting faster than
    /// its budget is refused before the others are looked at: a connect flood costs the
    /// daemon as little as possible per connection. When all `maxConnections` are taken,
    /// a peer holding at least two fewer than the biggest holder is still admitted and one
    /// of the biggest holder's connections is displaced: many peers each within their
    /// own limit cannot lock out everyone else (root included); the biggest pays.
    ///
    /// A trusted front end (`bridge`) connects for clients it names later: its uid is held
    /// to `maxConnectionsPerBridge` in all and not to a connect rate (each client is, when
    /// named: `name`).
    func admit(_ output: ConnectionOutput, uid: UInt32, bridge: Bool = false, now: NIODeadline) -> Admission {
        let key = PeerKey(uid: uid)
        return state.withLockedValue { state in
            if state.draining { return .draining }
            if !bridge, state.connects != nil, !unthrottledUIDs.contains(uid), state.connects?.take(key, now: now) == false {
                return .connectingTooFast
            }
            let limit = bridge ? maxConnectionsPerBridge : maxConnectionsPerUID
            let held = bridge ? state.held(byUID: uid) : state.held(by: key)
            var displaced: Admission?
            if state.connections.count >= maxConnections {
                // A peer at its own limit never displaces (adopted connections may exceed it).
                guard held < limit, let victim = Self.displaceable(for: key, in: &state) else {
                    return .tooManyConnections
                }
                displaced = victim
            }
            if held >= limit { return .tooManyForUser }
            state.add(output, key: key)
            state.acceptedTotal += 1
            return displaced ?? .admitted
        }
    }

    enum Naming: Equatable { case named, tooManyForClient, connectingTooFast }

    /// A trusted front end's connection names its client: from now on it counts under the
    /// client's key, within that client's own limit and connect rate.
    func name(_ output: ConnectionOutput, from old: PeerKey, to new: PeerKey, now: NIODeadline) -> Naming {
        state.withLockedValue { state in
            if state.connects != nil, state.connects?.take(new, now: now) == false { return .connectingTooFast }
            if state.held(by: new) >= maxConnectionsPerClient { return .tooManyForClient }
            state.move(ObjectIdentifier(output), from: old, to: new)
            return .named
        }
    }

    /// Counts out one connection of the peer holding the most, if that is at least two more
    /// than `key` holds (two peers of about the same size do not take turns displacing).
    ///
    /// A front end counts both ways: its clients each as a peer, and its uid as one holder of
    /// all of them, so a site full of visitors cannot lock local users out either (one of its
    /// biggest client's connections goes).
    private static func displaceable(for key: PeerKey, in state: inout State) -> Admission? {
        let own = state.held(by: key)
        guard var biggest = state.byKey.max(by: { $0.value.count < $1.value.count }) else { return nil }
        var held = biggest.value.count
        if let uid = state.byUID.max(by: { $0.value < $1.value }), uid.key != key.uid, uid.value > held, uid.value >= state.held(byUID: key.uid) + 2,
            let client = state.byKey.filter({ $0.key.uid == uid.key }).max(by: { $0.value.count < $1.value.count }) {
            biggest = client
            held = uid.value
        } else {
            guard biggest.key != key, held >= own + 2 else { return nil }
        }
        guard let id = biggest.value.first, let victim = state.connections[id] else { return nil }
        state.remove(id, key: biggest.key)
        return .admittedDisplacing(victim: victim, victimKey: biggest.key, held: held)
    }

    /// Counts in a connection carried over from the previous process (issue 16): it was
    /// admitted there, and refusing it now would drop a client mid-form, so no limit applies.
    func adopt(_ output: ConnectionOutput, key: PeerKey) {
        state.withLockedValue { $0.add(output, key: key) }
    }

    /// A connection closed (once counted out, a displaced one is not counted again).
    func remove(_ output: ConnectionOutput, key: PeerKey) {
        let waiters: [CheckedContinuation<Void, Never>] = state.withLockedValue { state in
            guard state.connections[ObjectIdentifier(output)] != nil else { return [] }
            state.remove(ObjectIdentifier(output), key: key)
            guard state.connections.isEmpty else { return [] }
            state.lastConnectionClosed = clock.now()
            defer { state.connectionWaiters = [] }
            return state.connectionWaiters
        }
        for waiter in waiters { waiter.resume() }
    }

    var connectionCount: Int { state.withLockedValue { $0.connections.count } }

    /// The most connections since the previous call (for the memory-return looks: a flood
    /// between two looks still counts).
    func takeMostConnectionsSinceLook() -> Int {
        state.withLockedValue { state in
            defer { state.mostSinceLook = state.connections.count }
            return max(state.mostSinceLook, state.connections.count)
        }
    }

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
    /// Connections held per peer (uid, or front-end client), for `status`.
    func countsByPeer() -> [PeerKey: Int] { state.withLockedValue { $0.byKey.mapValues(\.count) } }

    var allConnections: [ConnectionOutput] { state.withLockedValue { Array($0.connections.values) } }
}
