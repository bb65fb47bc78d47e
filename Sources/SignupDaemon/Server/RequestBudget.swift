import NIOCore

/// A token bucket for a connection's expensive requests (open, attach, submit, verify, sessions, locale, describe):
/// `perSecond` on average, bursts of twice that.
struct RequestBudget {
    private let perSecond: Double
    private var tokens: Double
    private var last: NIODeadline
    private let clock: DaemonClock

    init(perSecond: Int, clock: DaemonClock = .system) {
        self.perSecond = Double(perSecond)
        self.clock = clock
        tokens = Double(perSecond) * 2
        last = clock.now()
    }

    /// Takes one token, or returns false when the connection must slow down.
    mutating func take() -> Bool {
        let now = clock.now()
        let elapsed = Double((now - last).nanoseconds) / 1e9
        last = now
        tokens = min(perSecond * 2, tokens + elapsed * perSecond)
        guard tokens >= 1 else { return false }
        tokens -= 1
        return true
    }
}
