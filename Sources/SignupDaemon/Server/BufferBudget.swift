import NIOCore
import Synchronization

/// The memory all connections hold for their clients together: request bytes read but
/// not handled yet (a partial line, lines waiting their turn) and answers the client has
/// not read. Each connection publishes what it holds (after each read, handling turn and
/// write, and once a second while output is pending). Past `limit` in total, connections
/// are dropped — the biggest of the owner holding the most in all, again and again, until
/// the total is back to three quarters of the limit (`BudgetVictims`) — so that many
/// clients that each stay under `--max-line-bytes` and `--max-output-bytes` still cannot
/// make the daemon buffer without bound, and a quiet client, which holds next to nothing,
/// is never the one to pay.
final class BufferBudget: Sendable {
    let limit: Int
    /// An owner holding less than this in all is never dropped for the budget.
    let floor: Int
    private let total = Atomic<Int>(0)
    private let sweeping = Atomic<Bool>(false)
    /// When the last sweep ran (uptime nanoseconds): at most one every `interval`, however
    /// many connections find the total over the limit meanwhile.
    private let lastSweep = Atomic<UInt64>(0)
    /// A look again is scheduled (see `Sweep.recheck`).
    private let recheckScheduled = Atomic<Bool>(false)

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

    /// What a connection that found the total over the limit does next.
    enum Sweep<Holder> {
        /// Drop these (`BudgetVictims`): what they hold brings the total to three quarters of the limit.
        case drop([Holder])
        /// A sweep ran less than `interval` ago, or runs now, and may not have counted what
        /// came since: look again after this long (`enforce` schedules it).
        case recheck(after: TimeAmount)
        /// Nothing to do: under the limit, or a look again is already scheduled.
        case none
    }

    /// Picks the connections to drop among `holders()`: the biggest of the owner holding
    /// the most, again and again, until what they hold brings the total to three quarters
    /// of the limit (`BudgetVictims`). At most one sweep
    /// every `interval` and one at a time; a connection refused for either gets `.recheck`
    /// once, so that bytes arriving just after a sweep are not left over the limit when
    /// nothing else arrives (a flood that stops within 50 ms of a sweep did, CI stop 36).
    func sweep<Holder, Owner: Hashable>(_ holders: () -> [Holder], held: (Holder) -> Int, owner: (Holder) -> Owner) -> Sweep<Holder> {
        let current = total.load(ordering: .relaxed)
        guard current > limit else { return .none }
        let now = clock.now().uptimeNanoseconds
        let since = now &- lastSweep.load(ordering: .relaxed)
        let interval = Self.interval(held: current, limit: limit)
        guard since >= interval,
              sweeping.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged
        else {
            return scheduleRecheck(after: since >= interval ? interval : interval - since)
        }
        defer { sweeping.store(false, ordering: .releasing) }
        lastSweep.store(now, ordering: .relaxed)
        let excess = total.load(ordering: .relaxed) - limit * 3 / 4
        guard excess > 0 else { return .none }
        var victims = BudgetVictims(holders().map { (holder: $0, owner: owner($0), bytes: held($0)) }, floor: floor)
        return .drop(victims.choose(toFree: excess))
    }

    /// The scheduled look again is due: clears the mark, so the sweep it runs may schedule
    /// another.
    func recheckDue() {
        recheckScheduled.store(false, ordering: .releasing)
    }

    private func scheduleRecheck<Holder>(after nanoseconds: UInt64) -> Sweep<Holder> {
        guard recheckScheduled.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged else { return .none }
        return .recheck(after: .nanoseconds(Int64(nanoseconds)))
    }

    /// Sweeps at most every 50 ms (nanoseconds) while the total is within twice the limit,
    /// every millisecond past that: 500 connections sending 60 KB at once took the total to
    /// 14 times a 2 MiB budget within one 50 ms spacing (helper-27).
    static func interval(held: Int, limit: Int) -> UInt64 {
        held / 2 > limit ? 1_000_000 : 50_000_000
    }
}

extension BufferBudget {
    /// A connection found the total over the limit: drops the biggest holders of all
    /// `registry`'s connections, or looks again on `loop` once a sweep may run.
    func enforce(over registry: ConnectionRegistry, on loop: any EventLoop) {
        switch sweep({ registry.allConnections }, held: \.heldBytes, owner: \.principal.key) {
        case .drop(let victims):
            for victim in victims { victim.dropForBudget() }
        case .recheck(let delay):
            loop.scheduleTask(in: delay) { [self] in
                recheckDue()
                enforce(over: registry, on: loop)
            }
        case .none:
            break
        }
    }
}
