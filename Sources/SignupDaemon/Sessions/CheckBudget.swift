import NIOConcurrencyHelpers
import NIOCore

/// How fast answers about whether a name exists may come: per peer uid (shared by all its
/// sessions) and per session, token buckets with bursts of twice the rate. A check past
/// the budget is not refused but started later, in its turn — and, being superseded by the newest
/// value meanwhile, a person typing never notices; a script enumerating names gets at most
/// the rate.
final class CheckBudget: Sendable {
    struct Bucket: Sendable {
        var tokens: Double
        var last: NIODeadline

        init(perSecond: Double, now: NIODeadline) {
            tokens = perSecond * 2
            last = now
        }

        mutating func refill(perSecond: Double, now: NIODeadline) {
            let elapsed = Double((now - last).nanoseconds) / 1e9
            last = now
            tokens = min(perSecond * 2, tokens + max(0, elapsed) * perSecond)
        }

        /// How long until the debt is paid (zero: no debt).
        func wait(perSecond: Double) -> TimeAmount {
            tokens >= 0 ? .zero : .nanoseconds(Int64((-tokens / perSecond * 1e9).rounded(.up)))
        }
    }

    let perUIDPerSecond: Double
    let perSessionPerSecond: Double
    private let buckets = NIOLockedValueBox<[UInt32: Bucket]>([:])

    init(perUIDPerSecond: Int, perSessionPerSecond: Int) {
        self.perUIDPerSecond = Double(perUIDPerSecond)
        self.perSessionPerSecond = Double(perSessionPerSecond)
    }

    /// Takes a token from the uid's bucket and the session's and returns how long to wait
    /// before the check may start (zero: now). The token is reserved even when it is not
    /// there yet (the bucket goes into debt): each waiting check has its own turn, so a
    /// thousand sessions waiting on one uid's budget wake one at a time, never all at once
    /// to ask again (which is what kept the event loops busy under a `set` flood).
    func take(uid: UInt32, session: inout Bucket, now: NIODeadline) -> TimeAmount {
        session.refill(perSecond: perSessionPerSecond, now: now)
        session.tokens -= 1
        let sessionWait = session.wait(perSecond: perSessionPerSecond)
        let perUID = perUIDPerSecond
        let uidWait: TimeAmount = buckets.withLockedValue { buckets in
            var bucket = buckets[uid] ?? Bucket(perSecond: perUID, now: now)
            bucket.refill(perSecond: perUID, now: now)
            bucket.tokens -= 1
            // A full bucket is the default: forget it, so the table holds only busy uids.
            buckets[uid] = bucket.tokens >= perUID * 2 ? nil : bucket
            return bucket.wait(perSecond: perUID)
        }
        return max(uidWait, sessionWait)
    }

    /// Gives back a token reserved for a check that will never start (its session closed
    /// while it waited), so a uid's gone sessions do not keep its later checks waiting.
    func refund(uid: UInt32) {
        let perUID = perUIDPerSecond
        buckets.withLockedValue { buckets in
            guard var bucket = buckets[uid] else { return }
            bucket.tokens = min(perUID * 2, bucket.tokens + 1)
            buckets[uid] = bucket.tokens >= perUID * 2 ? nil : bucket
        }
    }
}
