import FormEngine
import NIOCore

/// Where the daemon reads the time for its budgets, debounce deadlines and idle timeouts:
/// NIO's monotonic uptime, or in tests the virtual time of a testing event loop (whose
/// scheduled tasks then run at the deadlines the daemon computed from it).
struct DaemonClock: Sendable {
    let now: @Sendable () -> NIODeadline

    /// The system's monotonic clock.
    static let system = DaemonClock { .now() }

    /// The engine's reading of the same clock.
    var moment: Moment { Self.moment(now()) }

    /// A reading of the clock as the engine counts time.
    static func moment(_ reading: NIODeadline) -> Moment { Moment(nanoseconds: Int64(reading.uptimeNanoseconds)) }
}
