import Glibc
import NIOPosix
import Testing

@testable import SignupDaemonCore

/// The first connection's one-time costs, paid during the start (issue 29): the warm-up goes
/// through what an accepted connection goes through, the peer-credentials look-up included,
/// and leaves nothing open.
@Suite struct FirstConnectionWarmUpTests {
    @Test("the warm-up's channel finds its peer (this process) and is closed")
    func findsItsPeerAndCloses() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let credentials = try await FirstConnectionWarmUp.start(on: group, outputCap: 64 * 1024).get()
        try await group.shutdownGracefully()
        // Not `.unknown`: the cast to SocketOptionProvider and SO_PEERCRED worked.
        #expect(credentials == PeerCredentials(pid: getpid(), uid: getuid(), gid: getgid()))
    }
}
