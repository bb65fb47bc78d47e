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
    private let byUID: NIOLockedValueBox<TokenBuckets<UInt32>>

    init(perUIDPerSecond: Int, perSessionPerSecond: Int) {
        self.perUIDPerSecond = Double(perUIDPerSecond)
        self.perSessionPerSecond = Double(perSessionPerSecond)
        byUID = NIOLockedValueBox(TokenBuckets(perSecond: Double(perUIDPerSecond)))
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
    func take(uid: UInt32, session: inout TokenBucket, now: NIODeadline) -> TimeAmount {
        let sessionWait = session.reserve(now: now)
        let uidWait = byUID.withLockedValue { $0.reserve(uid, now: now) }
        return max(uidWait, sessionWait)
    }

    /// Gives back a token reserved for a check that will never start (its session closed
    /// while it waited), so a uid's gone sessions do not keep its later checks waiting.
    func refund(uid: UInt32) {
        byUID.withLockedValue { $0.refund(uid) }
    }
}
