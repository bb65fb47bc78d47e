import NIOCore
import Synchronization

/// The memory all connections hold for their clients together: request bytes read but
/// not handled yet (a partial line, lines waiting their turn) and answers the client has
/// not read. Each connection publishes what it holds (after each read, handling turn and
/// write, and once a second while output is pending). Past `limit` in total, the
/// connections holding the most are dropped — biggest first, until the total is back
/// under three quarters of the limit — so that many clients that each stay under
/// `--max-line-bytes` and `--max-output-bytes` still cannot make the daemon buffer without
/// bound, and a quiet client, which holds next to nothing, is never the one to pay.
final class BufferBudget: Sendable {
    let limit: Int
    /// A connection holding less than this is never dropped for the budget.
    let floor: Int
    private let total = Atomic<Int>(0)
    private let sweeping = Atomic<Bool>(false)
    /// When the last sweep ran (uptime nanoseconds): at most one every 50 ms, however many
    /// connections find the total over the limit meanwhile.
    private let lastSweep = Atomic<UInt64>(0)

    private let clock: DaemonClock

    init(limit: Int, floor: Int = 4096, clock: DaemonClock = .system) {
        self.limit = limit
        self.floor = floor
        self.clock = clock
    }

    /// Adds `delta` (negative when bytes were handled or read) and returns the new total.
    func add(_ delta: Int) -> Int {
        guard delta != 0 else { return total.load(ordering: .relaxed) }
        return total.add(delta, ordering: .relaxed).newValue
    }

    var held: Int { total.load(ordering: .relaxed) }

    /// Picks the connections to drop: the biggest holders among `connections`, until what
    /// they hold brings the total under three quarters of the limit. One sweep at a time;
    /// nil while another runs.
    func sweep(_ connections: () -> [ConnectionOutput]) -> [ConnectionOutput]? {
        let now = clock.now().uptimeNanoseconds
        guard now &- lastSweep.load(ordering: .relaxed) >= 50_000_000 else { return nil }
        guard sweeping.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged else { return nil }
        defer { sweeping.store(false, ordering: .releasing) }
        lastSweep.store(now, ordering: .relaxed)
        var excess = total.load(ordering: .relaxed) - limit * 3 / 4
        guard excess > 0 else { return [] }
        var chosen: [ConnectionOutput] = []
        let holders = connections().map { ($0, $0.heldBytes) }.filter { $0.1 >= floor }.sorted { $0.1 > $1.1 }
        for (connection, bytes) in holders where excess > 0 {
            chosen.append(connection)
            excess -= bytes
        }
        return chosen
    }
}
