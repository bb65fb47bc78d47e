import NIOCore
import SignupProtocol
import Testing
@testable import SignupDaemonCore

/// Session memory is budgeted like buffers (issue 27): an owner alone may use half; when
/// others come, those over their equal share get no more, never a newcomer within it.
@Suite struct SessionBytesTests {
    @Test func oneOwnerMayUseHalfAndTheOthersTheRest() {
        var budget = SessionBytesState(limit: 1000, floor: 100)
        #expect(budget.take(400, peer: 1) == nil)
        #expect(budget.take(100, peer: 1) == nil)
        #expect(budget.take(1, peer: 1) == .overShare(share: 500))
        #expect(budget.take(250, peer: 2) == nil)
        #expect(budget.take(250, peer: 3) == nil)
        #expect(budget.take(1, peer: 4) == nil)  // within the floor
        #expect(budget.take(100, peer: 4) == .full)
        #expect(budget.total == 1001)
    }

    @Test func pastThreeQuartersAnOwnerOverItsShareIsRefusedAndANewcomerIsNot() {
        var budget = SessionBytesState(limit: 1200, floor: 100)
        #expect(budget.take(500, peer: 1) == nil)
        #expect(budget.take(400, peer: 2) == nil)
        // A third owner: shares are 400 each; past 900 in all the first is over its share.
        #expect(budget.take(100, peer: 3) == nil)
        #expect(budget.take(10, peer: 1) == .overShare(share: 400))
        // The newcomer takes up to its share.
        #expect(budget.take(200, peer: 3) == nil)
        #expect(budget.take(150, peer: 3) == .full)
        #expect(budget.held(by: 3) == 300)
        // Giving back makes room: the first owner's ended session lets it go on.
        budget.give(300, peer: 1)
        #expect(budget.take(50, peer: 1) == nil)
    }

    @Test func theFloorIsEveryonesEvenWhenFull() {
        var budget = SessionBytesState(limit: 1000, floor: 100)
        for peer: PeerKey in [1, 2] { #expect(budget.take(500, peer: peer) == nil) }
        #expect(budget.take(100, peer: 3) == nil)
        #expect(budget.take(1, peer: 3) == .full)
        #expect(budget.total == 1100)
    }

    @Test func givingBackForgetsAnOwnerAndNeverGoesNegative() {
        var budget = SessionBytesState(limit: 1000, floor: 100)
        #expect(budget.take(200, peer: 1) == nil)
        budget.give(500, peer: 1)
        budget.give(10, peer: 2)
        #expect(budget.total == 0 && budget.held(by: 1) == 0)
        budget.adopt(300, peer: 3)
        #expect(budget.total == 300 && budget.held(by: 3) == 300)
    }

    /// Typing takes the budget's lock only at a step's edge, and deleting gives steps back
    /// only well below it: one byte at a time up to 10,000 and back down to nothing.
    @Test func valuesAreReservedInStepsWithRoomToDelete() {
        var reserved = 0
        var changes: [Int] = []
        for values in Array(0...10_000) + Array((0..<10_000).reversed()) {
            let next = SessionBytesState.reservation(for: values, reserved: reserved)
            #expect(next >= values && next % SessionBytesState.step == 0)
            if next != reserved { changes.append(next) }
            reserved = next
        }
        #expect(changes == [4096, 8192, 12288, 8192, 4096])
        // A paste over several steps takes them at once; emptying a long value leaves one.
        #expect(SessionBytesState.reservation(for: 9000, reserved: 0) == 12288)
        #expect(SessionBytesState.reservation(for: 0, reserved: 12288) == 4096)
        #expect(SessionBytesState.reservation(for: 0, reserved: 4096) == 4096)
    }

    /// Over a connection: a neighbour that filled its share is refused longer values and new
    /// sessions with limit_exceeded; another uid opens and types; the neighbour's shorter
    /// values and closed sessions give memory back.
    @Test func aNeighbourFillingSessionsIsRefusedAndAnotherUIDIsNot() async throws {
        let daemon = try InProcessDaemon { $0.maxSessionBytes = 1 << 20 }
        let long = String(repeating: "p", count: 4096)
        var refused: [JSONObject] = []
        var neighbours: [TestClient] = []
        for connection in 0..<8 {
            // Sessions per connection are 16 at most: 8 connections of 12 (96 × 12 KiB > 1 MiB).
            let neighbour = try await daemon.connect(uid: 1000)
            neighbours.append(neighbour)
            for round in 0..<12 {
                try await neighbour.send(#"{"op":"open","form":"signup","id":"o\#(connection).\#(round)"}"#)
                try await neighbour.send(#"{"op":"set","field":"password","value":"\#(long)"}"#)
                try await neighbour.send(#"{"op":"set","field":"repeatedPassword","value":"\#(long)"}"#)
            }
            // A uid's turn is 256 lines: time moves on for the next.
            await daemon.advance(by: .seconds(1))
            // A refused open leaves its sets with no session: no_session, not counted.
            refused += try await neighbour.sync().filter { $0.event == "error" && $0.string("code") != "no_session" }
        }
        #expect(!refused.isEmpty)
        #expect(refused.allSatisfy { $0.string("code") == "limit_exceeded" })
        #expect(refused.first?.string("message")?.contains("--max-session-bytes") == true)
        let held = daemon.services.sessionBytes.held(by: 1000)
        #expect(held <= 1 << 19)
        // Another uid: a whole form, nothing refused.
        let victim = try await daemon.connect(uid: 1001)
        try await victim.send(#"{"op":"open","form":"signup"}"#)
        try await victim.send(#"{"op":"set","field":"password","value":"\#(long)"}"#)
        try await victim.send(#"{"op":"set","field":"repeatedPassword","value":"\#(long)"}"#)
        #expect(try await victim.sync().allSatisfy { $0.event != "error" })
        // Over its share (a username that needs the next step is refused), a `set` the
        // engine refuses anyway says why, not limit_exceeded.
        try await neighbours[0].send(#"{"op":"set","field":"username","value":"\#(String(repeating: "u", count: 1000))"}"#)
        try await neighbours[0].send(#"{"op":"set","field":"nickname","value":"\#(long)"}"#)
        try await neighbours[0].send(#"{"op":"set","field":"password","value":"\#(long)x"}"#)
        let codes = try await neighbours[0].sync().filter { $0.event == "error" }.compactMap { $0.string("code") }
        #expect(codes == ["limit_exceeded", "unknown_field", "value_too_long"])
        // Values emptied give their steps back, down to one step; a closed session all it
        // holds (the first connection's last session got both long values: 2 steps).
        try await neighbours[0].send(#"{"op":"set","field":"password","value":""}"#)
        try await neighbours[0].send(#"{"op":"set","field":"repeatedPassword","value":""}"#)
        _ = try await neighbours[0].sync()
        #expect(daemon.services.sessionBytes.held(by: 1000) == held - 4096)
        try await neighbours[0].send(#"{"op":"close"}"#)
        _ = try await neighbours[0].sync()
        #expect(daemon.services.sessionBytes.held(by: 1000) == held - 4096 - (SessionBytesState.perSession + 4096))
        try await daemon.stop()
    }
}
