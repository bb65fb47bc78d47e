import NIOCore
import Testing
@testable import SignupDaemonCore

/// Each FDSTORE costs PID 1 time in proportion to the store's size: a uid's connections are
/// stored within a count and a rate, and all uids together within the unit's room.
@Suite struct CarryBudgetTests {
    let start = NIODeadline.uptimeNanoseconds(1_000_000_000)

    @Test func aUIDStoresItsBurstAtOnceThenAtTheRate() {
        var budget = CarryBudget(maxPerUID: 100, burst: 4, perSecond: 2, maxTotal: 1000)
        for _ in 0..<4 { #expect(budget.take(peer: 1000, now: start) == nil) }
        #expect(budget.take(peer: 1000, now: start) == .rate)
        // Another uid has its own burst.
        #expect(budget.take(peer: 1001, now: start) == nil)
        // Half a second refills one.
        #expect(budget.take(peer: 1000, now: start + .milliseconds(500)) == nil)
        #expect(budget.take(peer: 1000, now: start + .milliseconds(500)) == .rate)
        #expect(budget.stored(peer: 1000) == 5)
    }

    @Test func aUIDHoldsAtMostItsShareAndClosingGivesItBack() {
        var budget = CarryBudget(maxPerUID: 3, burst: 10, perSecond: 10, maxTotal: 1000)
        for _ in 0..<3 { #expect(budget.take(peer: 7, now: start) == nil) }
        #expect(budget.take(peer: 7, now: start) == .perPeer)
        budget.release(peer: 7)
        #expect(budget.take(peer: 7, now: start) == nil)
        #expect(budget.stored(peer: 7) == 3)
    }

    @Test func allUIDsTogetherFitTheStoreAndAdoptedConnectionsCount() {
        var budget = CarryBudget(maxPerUID: 10, burst: 10, perSecond: 10, maxTotal: 5)
        budget.adopt(peer: 1, now: start)
        budget.adopt(peer: 1, now: start)
        for uid in UInt32(2)...4 { #expect(budget.take(peer: PeerKey(uid: uid), now: start) == nil) }
        #expect(budget.total == 5)
        #expect(budget.take(peer: 5, now: start) == .total)
        budget.release(peer: 1)
        #expect(budget.take(peer: 5, now: start) == nil)
        // Releasing what was never stored changes nothing.
        budget.release(peer: 99)
        #expect(budget.total == 5)
    }
}
