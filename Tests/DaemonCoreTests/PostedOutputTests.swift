import NIOCore
import NIOEmbedded
import SignupProtocol
import Testing
@testable import SignupDaemonCore

/// What other threads send a connection (a session's events for its views on another loop,
/// answers from the store) is handled within its uid's share of the connection's loop, the
/// rest in the uid's next turn (issue 27's fresh eyes: one uid's fan-out to views kept a
/// loop from everyone's input for seconds). Another uid's is handled at once.
@Suite struct PostedOutputTests {
    @Test func postsFromOtherThreadsWaitForTheirUIDsTurnAndAnotherUIDsDoNot() async throws {
        let loop = NIOAsyncTestingEventLoop()
        let flooder = NIOAsyncTestingChannel(loop: loop)
        let victim = NIOAsyncTestingChannel(loop: loop)
        let address = try SocketAddress(ipAddress: "127.0.0.1", port: 1)
        try await flooder.connect(to: address)
        try await victim.connect(to: address)
        let outputs = try await loop.executeInContext {
            let turns = FairTurns(
                eventLoop: loop, linesPerUIDPerTurn: 4, timePerUIDPerTurn: .seconds(3600), turnInterval: .milliseconds(1),
                clock: DaemonClock { loop.now }, workClock: { loop.now }
            )
            let a = ConnectionOutput(channel: flooder, peer: PeerCredentials(pid: 1, uid: 1000, gid: 1000))
            let b = ConnectionOutput(channel: victim, peer: PeerCredentials(pid: 2, uid: 1001, gid: 1001))
            a.turns = turns
            b.turns = turns
            return [a, b]
        }
        // From this thread, not the loop's: ten events for uid 1000, one for uid 1001.
        for i in 0..<10 { outputs[0].deliver(.pong(id: .string("\(i)"))) }
        outputs[1].deliver(.pong(id: .string("v")))
        await loop.run()
        #expect(try await Self.lines(flooder) == 4)
        #expect(try await Self.lines(victim) == 1)
        // Each turn of the loop, four more.
        await loop.advanceTime(by: .milliseconds(1))
        #expect(try await Self.lines(flooder) == 4)
        await loop.advanceTime(by: .milliseconds(1))
        #expect(try await Self.lines(flooder) == 2)
        await loop.advanceTime(by: .milliseconds(1))
        #expect(try await Self.lines(flooder) == 0)
        await loop.shutdownGracefully()
    }

    /// Lines written to `channel` since the last look.
    private static func lines(_ channel: NIOAsyncTestingChannel) async throws -> Int {
        var count = 0
        while let buffer = try await channel.readOutbound(as: ByteBuffer.self) {
            count += buffer.readableBytesView.filter { $0 == UInt8(ascii: "\n") }.count
        }
        return count
    }
}
