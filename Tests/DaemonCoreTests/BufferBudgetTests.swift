import NIOConcurrencyHelpers
import NIOCore
import Testing
@testable import SignupDaemonCore

/// The total budget on what all connections buffer: the biggest holders are dropped, at most
/// one sweep every 50 ms — and bytes that arrive just after a sweep are looked at again
/// rather than left over the limit (hostile_neighbour.py part 12 kept 43 half lines of
/// 60,000 bytes against a 2 MiB budget when the flood stopped inside the 50 ms).
@Suite struct BufferBudgetTests {
    /// Holders are (name, bytes held).
    typealias Holder = (name: String, bytes: Int)

    final class Clock: Sendable {
        let now = NIOLockedValueBox(NIODeadline.uptimeNanoseconds(1_000_000_000))
        var daemonClock: DaemonClock { DaemonClock { [now] in now.withLockedValue { $0 } } }
        func advance(_ amount: TimeAmount) { now.withLockedValue { $0 = $0 + amount } }
    }

    func names(_ sweep: BufferBudget.Sweep<Holder>) -> [String]? {
        if case .drop(let holders) = sweep { return holders.map(\.name) }
        return nil
    }

    @Test func theBiggestHoldersAreDroppedUntilThreeQuartersOfTheLimit() {
        let clock = Clock()
        let budget = BufferBudget(limit: 1000, floor: 10, clock: clock.daemonClock)
        let holders: [Holder] = [("small", 5), ("a", 300), ("b", 500), ("c", 200), ("d", 100)]
        _ = budget.add(holders.map(\.bytes).reduce(0, +))
        // 1,105 held; under 750 needs 355 gone: the biggest (500) does it. "small" is under the floor.
        #expect(names(budget.sweep({ holders }, held: \.bytes)) == ["b"])
    }

    @Test func underTheLimitNothingIsSwept() {
        let clock = Clock()
        let budget = BufferBudget(limit: 1000, clock: clock.daemonClock)
        _ = budget.add(1000)
        guard case .none = budget.sweep({ [Holder]() }, held: \.bytes) else {
            Issue.record("a total at the limit is not over it")
            return
        }
    }

    @Test func bytesArrivingWithin50msOfASweepAreLookedAtAgainOnce() {
        let clock = Clock()
        let budget = BufferBudget(limit: 1000, floor: 10, clock: clock.daemonClock)
        var holders: [Holder] = [("a", 600), ("b", 600)]
        _ = budget.add(1200)
        #expect(names(budget.sweep({ holders }, held: \.bytes)) == ["a"])
        _ = budget.add(-600)
        holders.removeFirst()

        // 10 ms later a burst puts the total over again, then stops.
        clock.advance(.milliseconds(10))
        holders += [("c", 300), ("d", 400)]
        _ = budget.add(700)
        guard case .recheck(let after) = budget.sweep({ holders }, held: \.bytes) else {
            Issue.record("a sweep refused by the 50 ms spacing schedules a look again")
            return
        }
        #expect(after == .milliseconds(40))
        // Other connections finding the total over meanwhile do not schedule more.
        guard case .none = budget.sweep({ holders }, held: \.bytes) else {
            Issue.record("one look again at a time")
            return
        }

        // The look again runs when due and drops what the burst left over the limit.
        clock.advance(after)
        budget.recheckDue()
        #expect(names(budget.sweep({ holders }, held: \.bytes)) == ["b"])
    }

    @Test func afterTheLookAgainRunsAnotherMayBeScheduled() {
        let clock = Clock()
        let budget = BufferBudget(limit: 100, floor: 1, clock: clock.daemonClock)
        let holders: [Holder] = [("a", 200)]
        _ = budget.add(200)
        #expect(names(budget.sweep({ holders }, held: \.bytes)) == ["a"])
        clock.advance(.milliseconds(1))
        guard case .recheck = budget.sweep({ holders }, held: \.bytes) else {
            Issue.record("first refusal schedules")
            return
        }
        clock.advance(.milliseconds(1))
        budget.recheckDue()
        // Still inside the 50 ms: the look again itself schedules the next one.
        guard case .recheck(let after) = budget.sweep({ holders }, held: \.bytes) else {
            Issue.record("a look again that comes too early schedules another")
            return
        }
        #expect(after == .milliseconds(48))
    }
}
