import NIOCore

/// Which connections go into systemd's file descriptor store, per uid (issue 16, and the
/// hostile neighbour of issue 11).
///
/// systemd compares every descriptor it is given with each one it already stores, so each
/// `FDSTORE=1` costs PID 1 time in proportion to the store's size: storing every accepted
/// connection let local users who only connected and closed keep PID 1 busy, and with it
/// `systemctl` for everyone. So a connection is stored only once it holds a session (a
/// connection without one has nothing to carry), and a uid may have at most
/// `maxPerUID` stored, stored at a rate of `perSecond` after a first `burst`; all uids
/// together at most `maxTotal` (signupd.service's `FileDescriptorStoreMax=` leaves room for
/// them and the handover state). A connection refused here is served as any other; a
/// restart stores it then if its uid's budget allows (`HandoverCoordinator.storeAtRestart`), or closes it. When all places are taken, a newcomer may take one from the biggest
/// holder (`move`, chosen by `CarryDisplacement`, issue 27): places are shared fairly.
struct CarryBudget: Sendable {
    let maxPerUID: Int
    let burst: Int
    let perSecond: Int
    let maxTotal: Int
    private(set) var total = 0

    private struct Account {
        var stored = 0
        var bucket: TokenBucket
    }
    private var accounts: [PeerKey: Account] = [:]

    init(maxPerUID: Int = 256, burst: Int = 64, perSecond: Int = 16, maxTotal: Int = 4096) {
        self.maxPerUID = maxPerUID
        self.burst = burst
        self.perSecond = perSecond
        self.maxTotal = maxTotal
    }

    enum Refusal: Equatable, Sendable { case perPeer, rate, total }

    /// Takes a place for one more of `uid`'s connections at `now`, or says why not.
    mutating func take(peer: PeerKey, now: NIODeadline) -> Refusal? {
        var account = accounts[peer] ?? newAccount(now: now)
        account.bucket.refill(now: now)
        defer { accounts[peer] = account }
        guard account.stored < maxPerUID else { return .perPeer }
        guard total < maxTotal else { return .total }
        guard account.bucket.take(now: now) else { return .rate }
        account.stored += 1
        total += 1
        return nil
    }

    /// Moves one of `victim`'s places to `peer` (the store is full; `CarryDisplacement` chose
    /// the victim), within `peer`'s count and rate; nil when moved, else why not.
    mutating func move(from victim: PeerKey, to peer: PeerKey, now: NIODeadline) -> Refusal? {
        guard victim != peer else { return nil }
        var account = accounts[peer] ?? newAccount(now: now)
        account.bucket.refill(now: now)
        defer { accounts[peer] = account }
        guard account.stored < maxPerUID else { return .perPeer }
        guard let held = accounts[victim]?.stored, held > 0 else { return .total }
        guard account.bucket.take(now: now) else { return .rate }
        account.stored += 1
        accounts[victim]?.stored = held - 1
        return nil
    }

    /// The uid holding the most places, and how many (ties: any of them).
    var biggestHolder: (peer: PeerKey, stored: Int)? {
        accounts.max { $0.value.stored < $1.value.stored }.map { ($0.key, $0.value.stored) }
    }

    /// Counts a connection adopted from the previous process (stored already).
    mutating func adopt(peer: PeerKey, now: NIODeadline) {
        let fresh = newAccount(now: now)
        accounts[peer, default: fresh].stored += 1
        total += 1
    }

    /// One of `uid`'s stored connections left the store.
    mutating func release(peer: PeerKey) {
        guard var account = accounts[peer], account.stored > 0 else { return }
        account.stored -= 1
        total -= 1
        // Forgotten once nothing is stored and the bucket is full again (a bounded map).
        accounts[peer] = account.stored == 0 && account.bucket.isFull ? nil : account
    }

    private func newAccount(now: NIODeadline) -> Account {
        Account(bucket: TokenBucket(rate: Double(perSecond), capacity: Double(burst), now: now))
    }

    /// Connections of `uid` stored now (for tests).
    func stored(peer: PeerKey) -> Int { accounts[peer]?.stored ?? 0 }
}
