import Testing
@testable import SignupDaemonCore

/// The store's turns (issue 27): a freed place goes to the next peer in turn, so a peer with
/// a hundred calls waiting puts one ahead of another peer's first.
@Suite struct StoreTurnsTests {
    let flood = PeerKey(uid: 1000)
    let victim = PeerKey(uid: 1001)
    let bridgeVisitor = PeerKey(uid: 33, client: .id("visitor"))

    @Test func callsWithinTheWidthGoStraightIn() {
        var turns = StoreTurnsState<String>(width: 2)
        #expect(turns.enter(flood, "f1") == .proceed)
        #expect(turns.enter(flood, "f2") == .proceed)
        #expect(turns.enter(victim, "v1") == .wait)
        #expect(turns.inStore == 2)
    }

    @Test func aFreedPlaceGoesToTheNextPeerNotTheNextCall() {
        var turns = StoreTurnsState<String>(width: 2)
        _ = turns.enter(flood, "f1")
        _ = turns.enter(flood, "f2")
        for index in 3...100 { #expect(turns.enter(flood, "f\(index)") == .wait) }
        #expect(turns.enter(victim, "v1") == .wait)
        #expect(turns.enter(bridgeVisitor, "b1") == .wait)
        #expect(turns.enter(victim, "v2") == .wait)
        // flood, victim, visitor, then flood, victim again: each peer's calls in order.
        let order = (0..<6).compactMap { _ in turns.leave() }
        #expect(order == ["f3", "v1", "b1", "f4", "v2", "f5"])
        #expect(turns.inStore == 2)
        #expect(turns.waitingCount == 95)
    }

    @Test func theLastCallOutEmptiesTheStore() {
        var turns = StoreTurnsState<String>(width: 1)
        _ = turns.enter(flood, "f1")
        _ = turns.enter(victim, "v1")
        #expect(turns.leave() == "v1")
        #expect(turns.inStore == 1)
        #expect(turns.leave() == nil)
        #expect(turns.inStore == 0)
        #expect(turns.enter(flood, "f2") == .proceed)
    }
}
