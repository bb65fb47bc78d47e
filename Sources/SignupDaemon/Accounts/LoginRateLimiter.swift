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
/// The caller keys it by the name's confusable skeleton (`UsernameIdentity.skeleton`), so
/// every spelling of a name shares one counter. Each failure remembers the account it was
/// against (nil: none), and a success forgets only that account's failures.
final class LoginRateLimiter: Sendable {
    private struct Failure {
        var at: UInt64
        var accountID: Int64?
    }

    private struct Key: Hashable {
        var uid: UInt32
        var identity: [UInt8]
    }

    private struct Entry {
        var failures: [Failure] = []
        var reserved = 0
    }

    private struct State {
        var entries: [Key: Entry] = [:]
        var global: [[UInt8]: [UInt64]] = [:]
    }

    static let minute: UInt64 = 60_000_000_000
    let limit: Int
    let globalLimit: Int
    private let memory: UInt64 = 60 * minute
    private let globalWindow: UInt64 = 10 * minute
    private let maxDelay: UInt64 = 60 * minute
    private let state = NIOLockedValueBox(State())

    init(limit: Int, globalLimit: Int? = nil) {
        self.limit = limit
        self.globalLimit = globalLimit ?? limit * 10
    }

    /// A reserved attempt; settle it with `failed`, `succeeded` or `release`.
    struct Reservation: Sendable {
        fileprivate let uid: UInt32
        fileprivate let identity: [UInt8]
    }

    /// Reserves an attempt by `uid` at `key` at `now` (monotonic nanoseconds), or nil when
    /// it must be refused.
    func reserve(uid: UInt32, key: String, now: UInt64) -> Reservation? {
        let key = Key(uid: uid, identity: Array(key.utf8))
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
            let attempts = entry.failures.count + entry.reserved
            if attempts >= limit {
                let extra = attempts - limit
                let delay = extra >= 6 ? maxDelay : min(maxDelay, Self.minute << UInt64(extra))
                let last = entry.failures.last?.at ?? now
                // Past its own allowance: its back-off, and the identity's global limit.
                if entry.reserved > 0 || age(last) < delay || global.count >= globalLimit {
                    state.entries[key] = entry
                    return nil
                }
            }
            entry.reserved += 1
            state.entries[key] = entry
            // Keep memory bounded under a flood of distinct names.
            if state.entries.count > 100_000 || state.global.count > 100_000 {
                Self.prune(&state, now: now, memory: memory, globalWindow: globalWindow)
            }
            return Reservation(uid: key.uid, identity: key.identity)
        }
    }

    /// The reserved attempt failed, against `accountID` (nil: no such account).
    func failed(_ reservation: Reservation, accountID: Int64?, now: UInt64) {
        state.withLockedValue { state in
            let key = Key(uid: reservation.uid, identity: reservation.identity)
            state.entries[key, default: Entry()].reserved -= 1
            state.entries[key, default: Entry()].failures.append(Failure(at: now, accountID: accountID))
            state.global[reservation.identity, default: []].append(now)
        }
    }

    /// The reserved attempt logged in to `accountID`: that uid's failures against it are forgotten.
    func succeeded(_ reservation: Reservation, accountID: Int64) {
        settle(reservation) { $0.failures.removeAll { $0.accountID == accountID } }
    }

    /// The reserved attempt never ran (its session went away, the store failed).
    func release(_ reservation: Reservation) {
        settle(reservation) { _ in }
    }

    private func settle(_ reservation: Reservation, _ change: (inout Entry) -> Void) {
        state.withLockedValue { state in
            let key = Key(uid: reservation.uid, identity: reservation.identity)
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
    }
}
