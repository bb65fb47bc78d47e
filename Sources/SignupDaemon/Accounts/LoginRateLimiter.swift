import NIOConcurrencyHelpers

/// Counts failed logins per username key in a sliding window; past the limit every
/// attempt is refused until old failures age out. In memory: a restart forgets it.
final class LoginRateLimiter: Sendable {
    private let limit: Int
    private let windowNanoseconds: UInt64
    private let failures = NIOLockedValueBox<[String: [UInt64]]>([:])

    init(limit: Int, window: Duration = .seconds(60)) {
        self.limit = limit
        let (seconds, attoseconds) = window.components
        windowNanoseconds = UInt64(seconds) * 1_000_000_000 + UInt64(attoseconds / 1_000_000_000)
    }

    /// Whether another attempt for `key` is refused at `now` (monotonic nanoseconds).
    func isLimited(_ key: String, now: UInt64) -> Bool {
        failures.withLockedValue { table in
            let recent = table[key]?.filter { now &- $0 < windowNanoseconds } ?? []
            table[key] = recent.isEmpty ? nil : recent
            return recent.count >= limit
        }
    }

    /// Records a failed attempt.
    func recordFailure(_ key: String, now: UInt64) {
        failures.withLockedValue { table in
            table[key, default: []].append(now)
            // Keep memory bounded under a flood of distinct names.
            if table.count > 100_000 {
                table = table.filter { $0.value.contains { now &- $0 < windowNanoseconds } }
            }
        }
    }

    /// Forgets the failures of `key` (after a successful login).
    func reset(_ key: String) {
        _ = failures.withLockedValue { $0.removeValue(forKey: key) }
    }
}
