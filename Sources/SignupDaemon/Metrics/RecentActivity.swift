import FormEngine
import NIOConcurrencyHelpers
import NIOCore

/// Signups and logins of the last fifteen minutes, in 15-second slots, for `signupctl status`
/// (the 1/5/15-minute figures `uptime` readers expect). Prometheus keeps the long history;
/// this is what an operator at the terminal asks "right now". Recorded when a submit ends
/// (never per keystroke).
final class RecentActivity: Sendable {
    /// One slot's counts, by "action outcome" (`signup ok`, `login throttled`).
    private struct Slot {
        var index: UInt64
        var counts: [String: Int] = [:]
    }
    /// Slots per minute: "the last minute" is the last 45 to 60 seconds.
    private static let perMinute: UInt64 = 4
    private static let slots = 15 * Int(perMinute)
    private static let slotNanoseconds: UInt64 = 60_000_000_000 / perMinute
    private let ring = NIOLockedValueBox([Slot](repeating: Slot(index: .max), count: RecentActivity.slots))
    private let now: @Sendable () -> UInt64

    /// `now`: nanoseconds on a monotonic clock (tests pass their own).
    init(now: @escaping @Sendable () -> UInt64 = { NIODeadline.now().uptimeNanoseconds }) {
        self.now = now
    }

    func submitted(_ action: SubmitAction, outcome: SubmitOutcome, peer: PeerKey) {
        let current = now() / Self.slotNanoseconds
        let key = "\(action == .signup ? "signup" : "login") \(DaemonMetrics.label(outcome))"
        ring.withLockedValue { ring in
            let slot = Int(current % UInt64(Self.slots))
            if ring[slot].index != current { ring[slot] = Slot(index: current) }
            ring[slot].counts[key, default: 0] += 1
        }
    }

    /// Per "action outcome": how many in the last 1, 5 and 15 minutes (to within a slot).
    struct Rate: Sendable, Equatable {
        var action: String
        var outcome: String
        var last1: Int
        var last5: Int
        var last15: Int
    }

    func rates() -> [Rate] {
        let current = now() / Self.slotNanoseconds
        var table: [String: Rate] = [:]
        ring.withLockedValue { ring in
            for slot in ring where slot.index != .max && slot.index <= current && current - slot.index < UInt64(Self.slots) {
                let age = (current - slot.index) / Self.perMinute
                for (key, count) in slot.counts {
                    let parts = key.split(separator: " ")
                    var rate = table[key] ?? Rate(action: String(parts[0]), outcome: String(parts[1]), last1: 0, last5: 0, last15: 0)
                    if age < 1 { rate.last1 += count }
                    if age < 5 { rate.last5 += count }
                    rate.last15 += count
                    table[key] = rate
                }
            }
        }
        return table.values.sorted { ($0.action, $0.outcome) < ($1.action, $1.outcome) }
    }
}
