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

    /// Takes one token, or returns false when the connection must slow down.
    mutating func take() -> Bool {
        bucket.take(now: clock.now())
    }
}
