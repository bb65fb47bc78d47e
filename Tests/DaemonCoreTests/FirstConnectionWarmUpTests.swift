import Glibc
import NIOPosix
import Testing

@testable import SignupDaemonCore

/// The first connection's one-time costs, paid during the start (issue 29): the warm-up goes
/// through what an accepted connection goes through, the peer-credentials look-up included,
/// and leaves nothing open.
@Suite struct FirstConnectionWarmUpTests {
    @Test("the warm-up's connection finds its peer (this process), its listener becomes active, and both are closed")
    func findsItsPeerListensAndCloses() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let outcome = try await FirstConnectionWarmUp.start(on: group, outputCap: 64 * 1024).get()
        try await group.shutdownGracefully()
        // Not `.unknown`: the cast to SocketOptionProvider and SO_PEERCRED worked; and the
        // listener was bound (autobind) and listening, or NIO's channel would have failed.
        #expect(outcome == .init(peer: PeerCredentials(pid: getpid(), uid: getuid(), gid: getgid()), listened: true))
    }
}
