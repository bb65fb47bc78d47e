/// How fast one WebSocket's messages are taken: a token bucket of `perSecond` with room for
/// `burst` (a person types ten keys a second; a paste is one message). A page over it is not
/// refused: the bridge reads its next message later, so a flood paces itself and costs
/// nobody else, and `describe` (a whole catalogue each) has a smaller budget of its own.
struct FrameBudget {
    private var tokens: Double
    private let perSecond: Double
    private let burst: Double
    private var last: ContinuousClock.Instant

    init(perSecond: Double, burst: Double, now: ContinuousClock.Instant = .now) {
        self.perSecond = perSecond
        self.burst = burst
        tokens = burst
        last = now
    }

    /// Takes one message's token; returns how long to wait before reading on (zero when
    /// there was one).
    mutating func take(now: ContinuousClock.Instant = .now) -> Duration {
        let elapsed = now - last
        last = now
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        tokens = min(burst, tokens + seconds * perSecond)
        tokens -= 1
        guard tokens < 0 else { return .zero }
        return .milliseconds(Int64((-tokens / perSecond * 1000).rounded(.up)))
    }
}
