import NIOConcurrencyHelpers
import NIOCore

/// How fast answers about whether a name exists may come: per peer uid (shared by all its
/// sessions) and per session, token buckets with bursts of twice the rate. A check past
/// the budget is not refused but started later — and, being superseded by the newest
/// value meanwhile, a person typing never notices; a script enumerating names gets at most
/// the rate.
final class CheckBudget: Sendable {
    struct Bucket: Sendable {
        var tokens: Double
        var last: NIODeadline

        init(perSecond: Double, now: NIODeadline = .now()) {
            tokens = perSecond * 2
            last = now
        }

        mutating func refill(perSecond: Double, now: NIODeadline) {
            let elapsed = Double((now - last).nanoseconds) / 1e9
            last = now
            tokens = min(perSecond * 2, tokens + max(0, elapsed) * perSecond)
        }

        /// How long until one token is there (zero: now).
        func wait(perSecond: Double) -> TimeAmount {
            tokens >= 1 ? .zero : .nanoseconds(Int64(((1 - tokens) / perSecond * 1e9).rounded(.up)))
        }
    }

    let perUIDPerSecond: Double
    let perSessionPerSecond: Double
    private let buckets = NIOLockedValueBox<[UInt32: Bucket]>([:])

    init(perUIDPerSecond: Int, perSessionPerSecond: Int) {
        self.perUIDPerSecond = Double(perUIDPerSecond)
        self.perSessionPerSecond = Double(perSessionPerSecond)
    }

    /// Takes a token from the uid's bucket and the session's, or returns how long to wait
    /// before asking again (nothing is taken then).
    func take(uid: UInt32, session: inout Bucket, now: NIODeadline = .now()) -> TimeAmount {
        session.refill(perSecond: perSessionPerSecond, now: now)
        let sessionWait = session.wait(perSecond: perSessionPerSecond)
        let perUID = perUIDPerSecond
        let uidWait: TimeAmount = buckets.withLockedValue { buckets in
            var bucket = buckets[uid] ?? Bucket(perSecond: perUID, now: now)
            bucket.refill(perSecond: perUID, now: now)
            let wait = bucket.wait(perSecond: perUID)
            if wait == .zero && sessionWait == .zero { bucket.tokens -= 1 }
            // A full bucket is the default: forget it, so the table holds only busy uids.
            buckets[uid] = bucket.tokens >= perUID * 2 ? nil : bucket
            return wait
        }
        guard uidWait == .zero, sessionWait == .zero else { return max(uidWait, sessionWait) }
        session.tokens -= 1
        return .zero
    }
}
