import NIOCore
import NIOPosix

#if canImport(Glibc)
import Glibc
#endif

/// The first connection's one-time costs, paid on an idle event loop while the start goes on
/// rather than by the first client (issue 29, the cold start): the Swift runtime's first
/// look-ups for a connected socket's channel (its socket types, the options it is given,
/// the peer-credentials cast; each a scan of every conformance record in the binary) and
/// the handler's conformances. One end of a socket pair is opened as a channel, with the
/// options an accepted connection gets and no handler of signupd's, asked for its peer's
/// credentials and closed: nothing is counted, registered or logged, and nothing another
/// process can see or reach is made. (A listener on an abstract address the kernel picks
/// was warmed as well, for a tenth of a millisecond more: helper-46 bound all of the
/// kernel's million such names as another user, and every start then spun in the kernel,
/// unkillable. No name at all is used now.)
enum FirstConnectionWarmUp {
    /// Starts it; the result, for tests: the credentials the channel's peer was found to
    /// have (this process's), once the channel is closed.
    @discardableResult
    static func start(on group: EventLoopGroup, outputCap: Int) -> EventLoopFuture<PeerCredentials> {
        // Made on the loop, too: the bootstrap and the pair cost the start's own thread nothing.
        let loop = group.next()
        return loop.flatSubmit { open(on: loop, outputCap: outputCap) }
    }

    private static func open(on loop: EventLoop, outputCap: Int) -> EventLoopFuture<PeerCredentials> {
        var ends: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &ends) == 0 else {
            return loop.makeFailedFuture(IOError(errnoCode: errno, reason: "socketpair"))
        }
        let peer = ends[1]
        return ClientBootstrap(group: loop)
            // SignupServer.bind's child channel options.
            .channelOption(.allowRemoteHalfClosure, value: true)
            .channelOption(.writeBufferWaterMark, value: .init(low: outputCap / 2, high: outputCap))
            .channelOption(.socketOption(.so_sndbuf), value: ConnectionHandler.kernelSendBufferBytes)
            .channelOption(.recvAllocator, value: ConnectionHandler.recvAllocator)
            .channelOption(.maxMessagesPerRead, value: 1)
            .withConnectedSocket(ends[0])
            .always { _ in close(peer) }
            .flatMap { channel in
                let credentials = ConnectionHandler.peerCredentials(of: channel)
                askAsThePipelineDoes(ConnectionHandler.self)
                return channel.close().map { credentials }
            }
    }

    /// The casts NIO's pipeline makes of every handler it is given. Not optimised: written
    /// inline, the compiler answered them itself and the runtime was never asked (two scans
    /// were still paid after the first accept).
    @inline(never) @_optimize(none)
    private static func askAsThePipelineDoes(_ type: Any.Type) {
        _ = type as? any _ChannelInboundHandler.Type
        _ = type as? any _ChannelOutboundHandler.Type
    }
}
