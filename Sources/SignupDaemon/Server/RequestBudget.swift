import NIOCore

/// A token bucket for a connection's expensive requests (open, attach, submit, verify, sessions, locale, describe):
/// `perSecond` on average, bursts of twice that.
struct RequestBudget {
    private let perSecond: Double
    private var tokens: Double
    private var last: NIODeadline

    init(perSecond: Int) {
        self.perSecond = Double(perSecond)
        tokens = Double(perSecond) * 2
        last = .now()
    }

    /// Takes one token, or returns false when the connection must slow down.
    mutating func take() -> Bool {
        let now = NIODeadline.now()
        let elapsed = Double((now - last).nanoseconds) / 1e9
        last = now
        tokens = min(perSecond * 2, tokens + elapsed * perSecond)
        guard tokens >= 1 else { return false }
        tokens -= 1
        return true
    }
}
