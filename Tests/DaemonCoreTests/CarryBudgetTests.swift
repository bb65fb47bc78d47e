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

/// A full restart store is shared fairly (issue 27): a newcomer takes a place from the
/// biggest holder's least recently used connection, then from connections idle for long.
@Suite struct CarryDisplacementTests {
    let start = NIODeadline.uptimeNanoseconds(1_000_000_000)
    let idle = TimeAmount.seconds(300)

    /// Places held by `peer`, each a connection last used `start + i` seconds.
    private final class Connection {}
    private func fill(_ budget: inout CarryBudget, peer: PeerKey, count: Int, keep: inout [Connection], usedFrom first: Int = 0) -> [CarryDisplacement.Candidate] {
        (0..<count).map { i in
            #expect(budget.take(peer: peer, now: start) == nil)
            let connection = Connection()
            keep.append(connection)
            return .init(id: ObjectIdentifier(connection), peer: peer, lastUsed: start + .seconds(Int64(first + i)))
        }
    }

    @Test func aNewcomerTakesTheBiggestHoldersLeastRecentlyUsedPlace() {
        var budget = CarryBudget(maxPerUID: 100, burst: 100, perSecond: 100, maxTotal: 8)
        var keep: [Connection] = []
        // The neighbour took every place; one of its connections was used last long ago.
        var candidates = fill(&budget, peer: 1000, count: 8, keep: &keep, usedFrom: 10)
        candidates[5] = .init(id: candidates[5].id, peer: 1000, lastUsed: start)
        let now = start + .seconds(60)
        #expect(budget.take(peer: 1001, now: now) == .total)
        let chosen = CarryDisplacement.choose(for: 1001, among: candidates, budget: budget, now: now, idleAfter: idle)
        #expect(chosen == candidates[5])
        #expect(budget.move(from: 1000, to: 1001, now: now) == nil)
        #expect(budget.stored(peer: 1000) == 7 && budget.stored(peer: 1001) == 1 && budget.total == 8)
    }

    @Test func placesConvergeToEqualSharesAndStayThere() {
        var budget = CarryBudget(maxPerUID: 100, burst: 100, perSecond: 100, maxTotal: 8)
        var keep: [Connection] = []
        var candidates = fill(&budget, peer: 1000, count: 8, keep: &keep)
        let now = start + .seconds(60)
        // The victim takes places while it holds two fewer than the neighbour.
        for _ in 0..<4 {
            guard let chosen = CarryDisplacement.choose(for: 1001, among: candidates, budget: budget, now: now, idleAfter: idle) else { break }
            #expect(chosen.peer == 1000)
            #expect(budget.move(from: chosen.peer, to: 1001, now: now) == nil)
            candidates.removeAll { $0 == chosen }
            let connection = Connection()
            keep.append(connection)
            candidates.append(.init(id: ObjectIdentifier(connection), peer: 1001, lastUsed: now))
        }
        #expect(budget.stored(peer: 1000) == 4 && budget.stored(peer: 1001) == 4)
        // Equal shares: neither takes from the other while all are in use.
        #expect(CarryDisplacement.choose(for: 1001, among: candidates, budget: budget, now: now, idleAfter: idle) == nil)
        #expect(CarryDisplacement.choose(for: 1000, among: candidates, budget: budget, now: now, idleAfter: idle) == nil)
    }

    @Test func idleConnectionsGiveTheirPlaceFirstButNeverToABiggerHolder() {
        var budget = CarryBudget(maxPerUID: 100, burst: 100, perSecond: 100, maxTotal: 8)
        var keep: [Connection] = []
        // Equal shares; one of the neighbour's connections and the victim's first are idle.
        let neighbour = fill(&budget, peer: 1000, count: 4, keep: &keep, usedFrom: 500)
        let victim = fill(&budget, peer: 1001, count: 4, keep: &keep, usedFrom: 0)
        let now = start + .seconds(700)
        let all = neighbour + victim
        // The neighbour's newcomer: the least recently used idle one of a holder as big.
        #expect(CarryDisplacement.choose(for: 1000, among: all, budget: budget, now: now, idleAfter: idle) == victim[0])
        // A smaller holder's idle connections are never taken by a bigger one.
        budget.release(peer: 1001)
        let smaller = Array(victim.dropFirst())
        #expect(budget.take(peer: 1000, now: now) == nil)
        let more = Connection()
        keep.append(more)
        let grown = neighbour + [.init(id: ObjectIdentifier(more), peer: 1000, lastUsed: now)] + smaller
        #expect(CarryDisplacement.choose(for: 1000, among: grown, budget: budget, now: now, idleAfter: idle) == nil)
        // The smaller holder takes from the bigger one (5 against 3): its least recently used.
        #expect(CarryDisplacement.choose(for: 1001, among: grown, budget: budget, now: now, idleAfter: idle) == neighbour[0])
    }

    @Test func theNewcomersOwnRateAndCountStillHold() {
        var budget = CarryBudget(maxPerUID: 2, burst: 100, perSecond: 100, maxTotal: 4)
        for _ in 0..<2 { #expect(budget.take(peer: 1000, now: start) == nil) }
        for _ in 0..<2 { #expect(budget.take(peer: 1001, now: start) == nil) }
        #expect(budget.move(from: 1000, to: 1001, now: start) == .perPeer)
        var slow = CarryBudget(maxPerUID: 100, burst: 1, perSecond: 1, maxTotal: 2)
        #expect(slow.take(peer: 1000, now: start) == nil)
        #expect(slow.take(peer: 1000, now: start + .seconds(1)) == nil)
        #expect(slow.take(peer: 1001, now: start + .seconds(1)) == .total)
        #expect(slow.move(from: 1000, to: 1001, now: start + .seconds(1)) == nil)
        #expect(slow.move(from: 1000, to: 1001, now: start + .seconds(1)) == .rate)
        #expect(slow.stored(peer: 1000) == 1 && slow.total == 2)
    }
}
