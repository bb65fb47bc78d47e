import NIOConcurrencyHelpers

/// Counts failed logins per username in a sliding window; past the limit every attempt is
/// refused until old failures age out. In memory: a restart forgets it.
///
/// The caller keys it by the name's confusable skeleton (`UsernameIdentity.skeleton`), so
/// every spelling of a name — canonical twins, case variants, look-alikes — shares one
/// counter. Each failure remembers the account it was against (nil: none), and a
/// successful login forgets only that account's failures: logging in to a twin account
/// kept from before keys were normalised does not reset its sibling's counter.
final class LoginRateLimiter: Sendable {
    private struct Failure {
        var at: UInt64
        var accountID: Int64?
    }

    private let limit: Int
    private let windowNanoseconds: UInt64
    private let failures = NIOLockedValueBox<[[UInt8]: [Failure]]>([:])

    init(limit: Int, window: Duration = .seconds(60)) {
        self.limit = limit
        let (seconds, attoseconds) = window.components
        windowNanoseconds = UInt64(seconds) * 1_000_000_000 + UInt64(attoseconds / 1_000_000_000)
    }

    /// Whether another attempt for `key` is refused at `now` (monotonic nanoseconds).
    func isLimited(_ key: String, now: UInt64) -> Bool {
        let key = Array(key.utf8)
        return failures.withLockedValue { table in
            let recent = table[key]?.filter { now &- $0.at < windowNanoseconds } ?? []
            table[key] = recent.isEmpty ? nil : recent
            return recent.count >= limit
        }
    }

    /// Records a failed attempt against `accountID` (nil: no such account).
    func recordFailure(_ key: String, accountID: Int64?, now: UInt64) {
        let key = Array(key.utf8)
        failures.withLockedValue { table in
            table[key, default: []].append(Failure(at: now, accountID: accountID))
            // Keep memory bounded under a flood of distinct names.
            if table.count > 100_000 {
                table = table.filter { $0.value.contains { now &- $0.at < windowNanoseconds } }
            }
        }
    }

    /// Forgets the failures against `accountID` under `key` (after it logged in).
    func reset(_ key: String, accountID: Int64) {
        let key = Array(key.utf8)
        failures.withLockedValue { table in
            let kept = table[key]?.filter { $0.accountID != accountID } ?? []
            table[key] = kept.isEmpty ? nil : kept
        }
    }
}
