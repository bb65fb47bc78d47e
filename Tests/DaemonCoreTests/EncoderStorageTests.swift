import NIOCore
import NIOEmbedded
import SignupProtocol
import Testing
@testable import SignupDaemonCore

/// A connection does not keep a big answer's encoding storage for its life (helper-27: 900
/// connections that each got one 60 KB answer held 65 MB more than idle ones, and the buffer
/// budget counted none of it).
@Suite struct EncoderStorageTests {
    @Test func aBigAnswersStorageIsFreedOnceItIsQueued() async throws {
        let loop = NIOAsyncTestingEventLoop()
        let channel = NIOAsyncTestingChannel(loop: loop)
        try await channel.connect(to: try SocketAddress(ipAddress: "127.0.0.1", port: 1))
        let output = try await loop.executeInContext {
            ConnectionOutput(channel: channel, peer: PeerCredentials(pid: 1, uid: 1000, gid: 1000))
        }
        let big = String(repeating: "x", count: 60_000)
        let (small, afterBig) = try await loop.executeInContext {
            output.deliver(.pong(id: .string("small")))
            let small = output.encoderCapacity
            output.deliver(.pong(id: .string(big)))
            return (small, output.encoderCapacity)
        }
        #expect(small <= ConnectionOutput.keptEncoderBytes)
        #expect(afterBig <= ConnectionOutput.keptEncoderBytes)
        var written = 0
        while let buffer = try await channel.readOutbound(as: ByteBuffer.self) { written += buffer.readableBytes }
        #expect(written > 60_000, "the big answer was written whole: \(written) bytes")
        await loop.shutdownGracefully()
    }
}
