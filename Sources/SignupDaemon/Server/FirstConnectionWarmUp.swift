import NIOCore
import NIOPosix

#if canImport(Glibc)
import Glibc
#endif

/// The first connection's one-time costs, paid on an idle event loop while the start goes on
/// rather than by the first client (issue 29, the cold start): the Swift runtime's first
/// look-ups for a connected socket's channel (its socket types, the options it is given,
/// the peer-credentials cast; each a scan of every conformance record in the binary), the
/// handler's conformances, and a listening socket's channel and acceptor. One end of a
/// socket pair is opened as a channel, with the options an accepted connection gets and no
/// handler of signupd's, asked for its peer's credentials and closed; then a listener the
/// kernel names (abstract, never accepted from) is opened as a server channel and closed.
/// Nothing is counted, registered or logged.
enum FirstConnectionWarmUp {
    /// What the warm-up found, for tests.
    struct Outcome: Equatable {
        /// The credentials the connection's peer was found to have (this process's).
        var peer: PeerCredentials
        /// The listener's channel became active, then closed.
        var listened: Bool
    }

    /// Starts it; the result, for tests, once both channels are closed.
    @discardableResult
    static func start(on group: EventLoopGroup, outputCap: Int) -> EventLoopFuture<Outcome> {
        // Made on the loops, too: the bootstraps and the sockets cost the start's own thread
        // nothing. The listener on a loop of its own (the next, with more than one), so that
        // it is done before the start's thread binds its socket.
        let connecting = group.next()
        let listening = group.next()
        let peer = connecting.flatSubmit { open(on: connecting, outputCap: outputCap) }
        let listened = listening.flatSubmit { listen(on: listening) }
        return peer.and(listened).map { Outcome(peer: $0, listened: $1) }
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

    /// A listener's channel, opened and closed: its type's metadata (two scans, otherwise
    /// paid by the start's thread in the `socket` stage) and NIO's acceptor's conformances
    /// (two more, otherwise paid by the serving loop before its first accept). The socket is
    /// bound with the family alone, so the kernel gives it an unused abstract name
    /// (unix(7), autobind) and NIO's listen() succeeds; with `autoRead` off nothing is ever
    /// accepted from it, and a connection made to it meanwhile is reset when it closes.
    private static func listen(on loop: EventLoop) -> EventLoopFuture<Bool> {
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return loop.makeFailedFuture(IOError(errnoCode: errno, reason: "socket")) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sa_family_t>.size)) }
        }
        guard bound == 0 else {
            let code = errno
            close(descriptor)
            return loop.makeFailedFuture(IOError(errnoCode: code, reason: "bind"))
        }
        return ServerBootstrap(group: loop)
            // SignupServer.bind's server channel options, and no reading.
            .serverChannelOption(.backlog, value: 1)
            .serverChannelOption(.maxMessagesPerRead, value: 16)
            .serverChannelOption(.autoRead, value: false)
            .withBoundSocket(descriptor)
            .flatMap { channel in
                let active = channel.isActive
                return channel.close().map { active }
            }
    }
}
