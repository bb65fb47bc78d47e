/// How long each stage of something took (issue 29: what users wait for is measured per
/// stage). The start's stages, from the command's first step to `serving`, are the
/// `serving` line's `startup=`; the time before them (exec, the dynamic loader, the Swift
/// runtime) is the bench's connect → `hello` less their total. A restart's are the old
/// process's `handed over` line and the new one's `carried on` line (`took=`).
struct TimedStages: Sendable {
    private let began: ContinuousClock.Instant
    private var last: ContinuousClock.Instant
    private(set) var stages: [(name: String, took: Duration)] = []

    init(now: ContinuousClock.Instant = .now) {
        began = now
        last = now
    }

    /// Ends the stage named `name` now.
    mutating func finished(_ name: String, now: ContinuousClock.Instant = .now) {
        stages.append((name, now - last))
        last = now
    }

    /// From the first step to the end of the last stage.
    var total: Duration { last - began }

    /// "12.31 ms: forms 3.10 ms, store 2.20 ms, …", stages in the order they ran.
    var description: String {
        "\(Self.milliseconds(total)) ms: " + stages.map { "\($0.name) \(Self.milliseconds($0.took)) ms" }.joined(separator: ", ")
    }

    static func milliseconds(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        // In steps of 0.01 ms (10^13 attoseconds).
        let hundredths = seconds * 100_000 + attoseconds / 10_000_000_000_000
        let whole = hundredths / 100
        let fraction = hundredths % 100
        return "\(whole).\(fraction < 10 ? "0" : "")\(fraction)"
    }
}
