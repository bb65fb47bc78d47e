import NIOConcurrencyHelpers
import NIOCore
import NIOEmbedded
import Testing
@testable import SignupDaemonCore

/// What connections on other loops ask of sessions on this one runs within the asking uid's
/// share of this loop, the rest in its next turns, in the order it was asked; another uid's
/// runs at once (issue 27's fresh eyes: three uids' views asking their sessions for locale
/// changes kept the sessions' loops from everyone's input for hundreds of ms).
@Suite struct LoopWorkTests {
    @Test func workForOneUIDWaitsForItsTurnsInOrderAndAnotherUIDsRunsAtOnce() async throws {
        let loop = NIOAsyncTestingEventLoop()
        let turns = FairTurnsByLoop(linesPerUIDPerTurn: 4, timePerUIDPerTurn: .seconds(3600), turnInterval: .milliseconds(1), clock: DaemonClock { loop.now }, workClock: { loop.now })
        let work = turns.work(on: loop)
        let ran = NIOLockedValueBox<[String]>([])
        let flooder = PeerKey(uid: 1000)
        let victim = PeerKey(uid: 1001)
        // From this thread, not the loop's: ten for uid 1000, then one for uid 1001.
        for i in 0..<10 { work.post(for: flooder) { ran.withLockedValue { $0.append("f\(i)") } } }
        work.post(for: victim) { ran.withLockedValue { $0.append("v") } }
        await loop.run()
        #expect(ran.withLockedValue { $0 } == ["f0", "f1", "f2", "f3", "v"])
        #expect(try await loop.submit { work.pending }.get() == 6)
        // Four more each turn, in order.
        await loop.advanceTime(by: .milliseconds(1))
        #expect(ran.withLockedValue { $0 }.suffix(4) == ["f4", "f5", "f6", "f7"])
        // Posted while the rest waits: behind it.
        work.post(for: flooder) { ran.withLockedValue { $0.append("f10") } }
        await loop.run()
        #expect(ran.withLockedValue { $0 }.count == 9)
        await loop.advanceTime(by: .milliseconds(1))
        #expect(ran.withLockedValue { $0 }.suffix(3) == ["f8", "f9", "f10"])
        #expect(try await loop.submit { work.pending }.get() == 0)
        await loop.shutdownGracefully()
    }

    @Test func theShareIsTheUIDsOnTheLoopWithItsOwnRequests() async throws {
        let loop = NIOAsyncTestingEventLoop()
        let turns = FairTurnsByLoop(linesPerUIDPerTurn: 4, timePerUIDPerTurn: .seconds(3600), turnInterval: .milliseconds(1), clock: DaemonClock { loop.now }, workClock: { loop.now })
        let peer = PeerKey(uid: 1000)
        // The uid's connections on this loop handled three lines in this turn.
        try await loop.submit {
            let own = turns.turns(on: loop)
            own.spend(own.share(of: peer, upTo: 3), lines: 3)
        }.get()
        let ran = NIOLockedValueBox(0)
        for _ in 0..<3 { turns.work(on: loop).post(for: peer) { ran.withLockedValue { $0 += 1 } } }
        await loop.run()
        #expect(ran.withLockedValue { $0 } == 1)
        await loop.advanceTime(by: .milliseconds(1))
        #expect(ran.withLockedValue { $0 } == 3)
        await loop.shutdownGracefully()
    }
}
