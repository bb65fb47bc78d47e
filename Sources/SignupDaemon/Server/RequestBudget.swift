import NIOCore

/// A connection's budget for expensive requests (open, attach, submit, verify, sessions,
/// locale, describe): `perSecond` on average, bursts of twice that.
struct RequestBudget {
    private var bucket: TokenBucket
    private let clock: DaemonClock

    init(perSecond: Int, clock: DaemonClock = .system) {
        self.clock = clock
        bucket = TokenBucket(perSecond: Double(perSecond), now: clock.now())
    }

    /// Takes `cost` tokens (one for most requests; more for one that asks for more work),
    /// or returns false when the connection must slow down.
    mutating func take(_ cost: Int = 1) -> Bool {
        bucket.take(cost, now: clock.now())
    }
}
