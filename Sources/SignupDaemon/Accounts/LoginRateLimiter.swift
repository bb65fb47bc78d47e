import NIOConcurrencyHelpers

/// Throttles failed logins so that guessing is slow but cannot be turned against the
/// account's owner. In memory: a restart forgets it.
///
/// Failures are counted per (peer uid, identity): the first `limit` are free, then each
/// further attempt from that uid must wait twice as long as the one before (one minute,
/// two, four, … at most an hour) after its last failure. Failures are forgotten after an
/// hour. On top of that a slower global limit per identity (`globalLimit` failures in ten
/// minutes from all uids together) holds back the back-off attempts of uids that have
/// used up their own `limit` — but never touches a uid's own first `limit` attempts: what
/// one uid may try never depends on what other uids did, so the owner logging in from
/// their own uid, even after a typo or two, is not locked out by someone else's guessing.
///
/// An attempt is *reserved* before its hash runs (`reserve`), counted as a failure until it
/// is settled: parallel attempts cannot overshoot the limit.
///
/// Front ends (issue 23) speak for many people from one uid: their clients are counted
/// apart (`PeerKey`), each as a uid is, so one visitor's guessing never locks out another.
/// A visitor rotating client ids or addresses would get `limit` free attempts from each, so
/// on top of that a **backstop** per identity counts the failures of all front-end clients
/// together: past `backstop` in an hour (100, the most NIST SP 800-63B §5.2.2 allows in a
/// row; OWASP's Authentication Cheat Sheet counts failures against the account, not the
/// source), clients that never logged in to that name are refused, while a client that has
/// (the owner's own browser or app: OWASP's "device cookie") keeps its own allowance.
///
/// The caller keys it by the name's confusable skeleton (`UsernameIdentity.skeleton`), so
/// every spelling of a name shares one counter. Each failure remembers the account it was
/// against (nil: none), and a success forgets only that account's failures.
final class LoginRateLimiter: Sendable {
    private struct Failure {
        var at: UInt64
        var accountID: Int64?
    }

    private struct Key: Hashable {
        var peer: PeerKey
        var identity: [UInt8]
    }

    private struct KnownKey: Hashable {
        var device: SessionOwner
        var identity: [UInt8]
    }

    private struct Entry {
        var failures: [Failure] = []
        var reserved = 0
    }

    private struct State {
        var entries: [Key: Entry] = [:]
        var global: [[UInt8]: [UInt64]] = [:]
        /// Failures of front-end clients per identity, in the last hour (the backstop).
        var clientFailures: [[UInt8]: [UInt64]] = [:]
        /// Front-end clients (by their id: the device, whatever its address) that logged in
        /// to an identity, and when they last did.
        var known: [KnownKey: UInt64] = [:]
    }

    static let minute: UInt64 = 60_000_000_000
    let limit: Int
    let globalLimit: Int
    /// Failures of all front-end clients together per identity in an hour before clients
    /// that never logged in to it are refused.
    let backstop: Int
    private let memory: UInt64 = 60 * minute
    /// How long a client that logged in counts as known to that identity (30 days).
    private let knownFor: UInt64 = 30 * 24 * 60 * minute
    private let globalWindow: UInt64 = 10 * minute
    private static let maxDelay: UInt64 = 60 * minute
    private let state = NIOLockedValueBox(State())

    init(limit: Int, globalLimit: Int? = nil, backstop: Int = 100) {
        self.limit = limit
        self.globalLimit = globalLimit ?? limit * 10
        self.backstop = backstop
    }

    /// The rule of `reserve`, on counts (also the PostgreSQL store's, on every host's
    /// failures): `failures` by this uid in the last hour, the last `sinceLast` nanoseconds
    /// ago, `globalFailures` by anyone in the last ten minutes. Past its own `limit`, a uid
    /// waits out its back-off and the identity's global limit; before it, never refused.
    ///
    /// The backstop: a front-end client (`isClient`) that never logged in to the identity
    /// (`known`) is refused once all clients together failed `backstop` times in the hour.
    static func refuses(
        failures: Int, sinceLast: UInt64, globalFailures: Int, limit: Int, globalLimit: Int,
        isClient: Bool = false, known: Bool = false, clientFailures: Int = 0, backstop: Int = .max
    ) -> Bool {
        if isClient, !known, clientFailures >= backstop { return true }
        guard failures >= limit else { return false }
        let extra = failures - limit
        let delay = extra >= 6 ? maxDelay : min(maxDelay, minute << UInt64(extra))
        return sinceLast < delay || globalFailures >= globalLimit
    }

    /// A reserved attempt; settle it with `failed`, `succeeded` or `release`.
    struct Reservation: Sendable {
        fileprivate let peer: PeerKey
        fileprivate let device: SessionOwner?
        fileprivate let identity: [UInt8]
    }

    /// Why an attempt was not reserved.
    enum Refusal: Error, Equatable, Sendable {
        /// This peer's own failures (its back-off, or the name's global limit past it).
        case throttled
        /// The backstop: front-end clients together failed too often on this name, and
        /// this client never logged in to it.
        case backstop
    }

    /// Reserves an attempt, or says why not (`reserve`'s rule; `device`: a front-end
    /// client's id, which the backstop knows the owner's browser by).
    func reserve(peer: PeerKey, device: SessionOwner?, key: String, now: UInt64) -> Result<Reservation, Refusal> {
        let identity = Array(key.utf8)
        var refusal = Refusal.throttled
        let reservation = reserve(peer: peer, device: device, identity: identity, now: now) { refusal = $0 }
        return reservation.map { .success($0) } ?? .failure(refusal)
    }

    /// Reserves an attempt by `uid` at `key` at `now` (monotonic nanoseconds), or nil when
    /// it must be refused.
    func reserve(peer: PeerKey, key: String, now: UInt64) -> Reservation? {
        reserve(peer: peer, device: nil, identity: Array(key.utf8), now: now) { _ in }
    }

    private func reserve(peer: PeerKey, device: SessionOwner?, identity: [UInt8], now: UInt64, refused: (Refusal) -> Void) -> Reservation? {
        let key = Key(peer: peer, identity: identity)
        return state.withLockedValue { state in
            // `now` was read before the lock: a failure settled meanwhile on another thread
            // may be later. Ages saturate at zero, so such a failure counts as just now
            // rather than wrapping round to "forgotten long ago".
            func age(_ at: UInt64) -> UInt64 { now > at ? now - at : 0 }
            var entry = state.entries[key] ?? Entry()
            entry.failures.removeAll { age($0.at) >= memory }
            var global = state.global[key.identity] ?? []
            global.removeAll { age($0) >= globalWindow }
            state.global[key.identity] = global.isEmpty ? nil : global
            let isClient = peer.client != nil
            var clientFailures = 0
            if isClient {
                var failures = state.clientFailures[key.identity] ?? []
                failures.removeAll { age($0) >= memory }
                state.clientFailures[key.identity] = failures.isEmpty ? nil : failures
                clientFailures = failures.count
            }
            let known = isClient && device.flatMap { state.known[KnownKey(device: $0, identity: identity)] }.map { age($0) < knownFor } == true
            if isClient, !known, clientFailures >= backstop {
                state.entries[key] = entry
                refused(.backstop)
                return nil
            }
            let attempts = entry.failures.count + entry.reserved
            let sinceLast = age(entry.failures.last?.at ?? now)
            // Past its own allowance, one attempt at a time; then the common rule.
            if (attempts >= limit && entry.reserved > 0)
                || Self.refuses(
                    failures: attempts, sinceLast: sinceLast, globalFailures: global.count, limit: limit, globalLimit: globalLimit,
                    isClient: isClient, known: known, clientFailures: clientFailures, backstop: backstop
                ) {
                state.entries[key] = entry
                return nil
            }
            entry.reserved += 1
            state.entries[key] = entry
            // Keep memory bounded under a flood of distinct names.
            if state.entries.count > 100_000 || state.global.count > 100_000 || state.clientFailures.count > 100_000 || state.known.count > 100_000 {
                Self.prune(&state, now: now, memory: memory, globalWindow: globalWindow)
            }
            return Reservation(peer: key.peer, device: device, identity: key.identity)
        }
    }

    /// The reserved attempt failed, against `accountID` (nil: no such account).
    func failed(_ reservation: Reservation, accountID: Int64?, now: UInt64) {
        state.withLockedValue { state in
            let key = Key(peer: reservation.peer, identity: reservation.identity)
            state.entries[key, default: Entry()].reserved -= 1
            state.entries[key, default: Entry()].failures.append(Failure(at: now, accountID: accountID))
            state.global[reservation.identity, default: []].append(now)
            if reservation.peer.client != nil { state.clientFailures[reservation.identity, default: []].append(now) }
        }
    }

    /// The reserved attempt logged in to `accountID`: that uid's failures against it are forgotten.
    /// A front-end client that logs in becomes known to the identity (the backstop spares it).
    func succeeded(_ reservation: Reservation, accountID: Int64, now: UInt64) {
        settle(reservation) { $0.failures.removeAll { $0.accountID == accountID } }
        guard reservation.peer.client != nil, let device = reservation.device else { return }
        state.withLockedValue { $0.known[KnownKey(device: device, identity: reservation.identity)] = now }
    }

    /// The reserved attempt never ran (its session went away, the store failed).
    func release(_ reservation: Reservation) {
        settle(reservation) { _ in }
    }

    private func settle(_ reservation: Reservation, _ change: (inout Entry) -> Void) {
        state.withLockedValue { state in
            let key = Key(peer: reservation.peer, identity: reservation.identity)
            guard var entry = state.entries[key] else { return }
            entry.reserved -= 1
            change(&entry)
            state.entries[key] = entry.failures.isEmpty && entry.reserved == 0 ? nil : entry
        }
    }

    private static func prune(_ state: inout State, now: UInt64, memory: UInt64, globalWindow: UInt64) {
        func age(_ at: UInt64) -> UInt64 { now > at ? now - at : 0 }
        state.entries = state.entries.filter { $0.value.reserved > 0 || $0.value.failures.contains { age($0.at) < memory } }
        state.global = state.global.filter { $0.value.contains { age($0) < globalWindow } }
        state.clientFailures = state.clientFailures.filter { $0.value.contains { age($0) < memory } }
        state.known = state.known.filter { age($0.value) < 30 * 24 * 60 * minute }
    }
}
