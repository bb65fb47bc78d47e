import Testing
@testable import SignupDaemonCore

/// The metrics socket's places (issue 27's fresh eyes): sixteen uids filling them cannot
/// keep another uid's scraper out; a uid's own cap and root's exemption hold.
@Suite struct ScrapeSlotsTests {
    @Test func whenFullAUIDHoldingTwoFewerTakesTheBiggestHoldersOldestPlace() {
        var slots = ScrapeSlots<Int>(total: 8, perUID: 4)
        // Two uids take every place: 4 each.
        for c in 0..<4 { #expect(slots.admit(c, uid: 1000) == .admitted) }
        for c in 4..<8 { #expect(slots.admit(c, uid: 1001) == .admitted) }
        // A third uid's scraper gets in in the place of the first uid's oldest (ties: lowest uid).
        #expect(slots.admit(100, uid: 1002) == .admittedInPlaceOf(0))
        #expect(slots.count == 8 && slots.held(by: 1000) == 3)
        // Then from the other biggest holder.
        #expect(slots.admit(101, uid: 1002) == .admittedInPlaceOf(4))
        // 3, 3, 2: nobody holds two more than 1002 now.
        #expect(slots.admit(102, uid: 1002) == .refused)
        // The displaced connection's close changes nothing; a real close makes room.
        slots.release(0, uid: 1000)
        #expect(slots.count == 8)
        slots.release(1, uid: 1000)
        #expect(slots.admit(102, uid: 1002) == .admitted)
    }

    @Test func aUIDsOwnCapAndRootsExemptionHold() {
        var slots = ScrapeSlots<Int>(total: 64, perUID: 4)
        for c in 0..<4 { #expect(slots.admit(c, uid: 1000) == .admitted) }
        #expect(slots.admit(4, uid: 1000) == .refused)
        // Sixteen uids fill the rest; root still gets in, past the total.
        var next = 10
        for uid in UInt32(2000)..<2015 {
            for _ in 0..<4 {
                #expect(slots.admit(next, uid: uid) == .admitted)
                next += 1
            }
        }
        #expect(slots.count == 64)
        #expect(slots.admit(999, uid: 0) == .admitted)
        #expect(slots.count == 65)
        // A newcomer takes a place; root's connections are never the ones to give it.
        #expect(slots.admit(1000, uid: 3000) == .admittedInPlaceOf(0))
        #expect(slots.held(by: 0) == 1)
    }
}
