import NIOConcurrencyHelpers
import NIOCore

/// How fast answers about whether a name exists may come: per peer uid (shared by all its
/// sessions) and per session, token buckets with bursts of twice the rate. A check past
/// the budget is not refused but started later, in its turn — and, being superseded by the newest
/// value meanwhile, a person typing never notices; a script enumerating names gets at most
/// the rate.
final class CheckBudget: Sendable {
    let perUIDPerSecond: Double
    let perSessionPerSecond: Double
    private let byPeer: NIOLockedValueBox<TokenBuckets<PeerKey>>

    init(perUIDPerSecond: Int, perSessionPerSecond: Int) {
        self.perUIDPerSecond = Double(perUIDPerSecond)
        self.perSessionPerSecond = Double(perSessionPerSecond)
        byPeer = NIOLockedValueBox(TokenBuckets(perSecond: Double(perUIDPerSecond)))
    }

    /// A new session's own bucket.
    func sessionBucket(now: NIODeadline) -> TokenBucket {
        TokenBucket(perSecond: perSessionPerSecond, now: now)
    }

    /// Takes a token from the uid's bucket and the session's and returns how long to wait
    /// before the check may start (zero: now). The token is reserved even when it is not
    /// there yet (the bucket goes into debt): each waiting check has its own turn, so a
    /// thousand sessions waiting on one uid's budget wake one at a time, never all at once
    /// to ask again (which is what kept the event loops busy under a `set` flood).
    func take(peer: PeerKey, session: inout TokenBucket, now: NIODeadline) -> TimeAmount {
        let sessionWait = session.reserve(now: now)
        let uidWait = byPeer.withLockedValue { $0.reserve(peer, now: now) }
        return max(uidWait, sessionWait)
    }

    /// Takes a token from the peer's bucket for something that costs what a name lookup
    /// does (a wrong `resume` secret); returns how far into debt its next check now waits.
    func charge(peer: PeerKey, now: NIODeadline) -> TimeAmount {
        byPeer.withLockedValue { $0.reserve(peer, now: now) }
    }

    /// Gives back a token reserved for a check that will never start (its session closed
    /// while it waited), so a uid's gone sessions do not keep its later checks waiting.
    func refund(peer: PeerKey) {
        byPeer.withLockedValue { $0.refund(peer) }
    }
}
