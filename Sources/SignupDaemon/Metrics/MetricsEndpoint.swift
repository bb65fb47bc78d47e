import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import UnixIO

#if canImport(Glibc)
import Glibc
#endif

/// Serves `GET /metrics` over HTTP/1.1 (issue 26): on a Unix socket (`--metrics-socket`;
/// the package's `/run/signupd/metrics.sock`, group `signupd-clients`, mode 0660) and on TCP
/// only when `--metrics-listen` is given. The daemon binds these itself, not systemd: a
/// scrape reaches a running daemon only, never starts a stopped one, and scrapes are not
/// client connections, so they never keep an idle daemon from exiting.
///
/// A scrape renders the registry after sampling the levels (connections, sessions, queue
/// depth). Scrapers are local users: one must not keep the others out, nor make the daemon
/// buffer for it. At most `maxConnections` at once and `maxConnectionsPerUID` of one uid
/// (`SO_PEERCRED`; root is never refused; when all are taken, a uid holding two fewer than
/// the biggest holder takes that holder's oldest place: `ScrapeSlots`); each request must arrive whole within
/// `requestDeadline` of the connection or of the last answer (a trickled header does not
/// buy time), and a scraper that does not read its answers is closed once
/// `maxUnreadBytes` wait for it. A request head larger than NIO's limit is refused by NIO.
final class MetricsEndpoint: Sendable {
    enum Listener: Sendable, Equatable {
        case unix(path: String, group: UInt32?)
        case tcp(host: String, port: Int)
    }

    private let channels = NIOLockedValueBox<[Channel]>([])
    /// Scrape connections open, in all and per uid, and the channels to close when one
    /// gives its place.
    private let open = NIOLockedValueBox((
        slots: ScrapeSlots<ObjectIdentifier>(total: MetricsEndpoint.maxConnections, perUID: MetricsEndpoint.maxConnectionsPerUID),
        channels: [ObjectIdentifier: Channel]()
    ))
    private let render: @Sendable (_ openMetrics: Bool) -> [UInt8]
    private let logger: Logger
    static let maxConnections = 64
    static let maxConnectionsPerUID = 4
    static let requestDeadline = TimeAmount.seconds(10)
    static let maxUnreadBytes = 1 << 20

    /// `render`: the exposition, in the Prometheus text format or OpenMetrics.
    init(logger: Logger, render: @escaping @Sendable (_ openMetrics: Bool) -> [UInt8]) {
        self.logger = logger
        self.render = render
    }

    func bind(_ listener: Listener, group: EventLoopGroup) async throws {
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 16)
            .childChannelOption(.writeBufferWaterMark, value: .init(low: Self.maxUnreadBytes / 2, high: Self.maxUnreadBytes))
            .childChannelInitializer { [self] channel in
                let uid = Self.peerUID(of: channel)
                let id = ObjectIdentifier(channel)
                let (admission, displaced): (ScrapeSlots<ObjectIdentifier>.Admission, Channel?) = open.withLockedValue { open in
                    let admission = open.slots.admit(id, uid: uid)
                    guard admission != .refused else { return (admission, nil) }
                    open.channels[id] = channel
                    guard case .admittedInPlaceOf(let oldest) = admission else { return (admission, nil) }
                    return (admission, open.channels.removeValue(forKey: oldest))
                }
                guard admission != .refused else { return channel.close() }
                if let displaced {
                    logger.notice("metrics socket full: a scraper of the uid holding the most gave its place", metadata: ["uid": "\(uid.map(String.init) ?? "?")"])
                    displaced.close(promise: nil)
                }
                channel.closeFuture.whenComplete { [open] _ in
                    open.withLockedValue { open in
                        open.slots.release(id, uid: uid)
                        open.channels[id] = nil
                    }
                }
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                    try channel.pipeline.syncOperations.addHandler(ScrapeHandler(render: render, deadline: Self.requestDeadline))
                }
            }
        let channel: Channel
        switch listener {
        case .unix(let path, let gid):
            // The previous process's socket (a restart, a crash) is replaced; a daemon
            // still serving on it has its own socket unit to refuse a second start.
            unlink(path)
            do {
                channel = try await bootstrap.bind(unixDomainSocketPath: path).get()
            } catch {
                throw DaemonError.startup(BindFailure.describe(error, at: path))
            }
            // Readable by the group only once the socket is the group's: a socket left in
            // signupd's own group stays 0600 (helper-42: it was 0660 either way).
            var mode: mode_t = 0o600
            if let gid {
                if chown(path, uid_t.max, gid) == 0 {
                    mode = 0o660
                } else {
                    logger.warning("cannot give the metrics socket its group; it stays readable by signupd's user alone", metadata: ["path": "\(path)", "gid": "\(gid)", "error": "\(UnixIO.errnoText())"])
                }
            }
            chmod(path, mode)
        case .tcp(let host, let port):
            do {
                channel = try await bootstrap.bind(host: host, port: port).get()
            } catch {
                throw DaemonError.startup(BindFailure.describe(error, at: Self.describe(listener)))
            }
        }
        channels.withLockedValue { $0.append(channel) }
        logger.info("metrics served", metadata: ["at": "\(Self.describe(listener))"])
    }

    /// The connecting process's uid on a Unix socket (nil on TCP).
    private static func peerUID(of channel: Channel) -> UInt32? {
        guard channel.localAddress?.protocol == .unix, let provider = channel as? SocketOptionProvider else { return nil }
        let future: EventLoopFuture<PeerCredentials> = provider.unsafeGetSocketOption(level: SocketOptionLevel(SOL_SOCKET), name: SocketOptionName(SO_PEERCRED))
        var uid: UInt32?
        future.assumeIsolated().whenSuccess { uid = $0.uid }
        return uid
    }

    static func describe(_ listener: Listener) -> String {
        switch listener {
        case .unix(let path, _): path
        case .tcp(let host, let port): host.contains(":") ? "http://[\(host)]:\(port)/metrics" : "http://\(host):\(port)/metrics"
        }
    }

    /// Stops listening; a Unix socket file is removed (a scrape then finds nothing).
    func close(_ listeners: [Listener]) async {
        let bound = channels.withLockedValue { channels in
            defer { channels = [] }
            return channels
        }
        for channel in bound { try? await channel.close() }
        for case .unix(let path, _) in listeners { unlink(path) }
    }
}

/// One scrape connection: `GET /metrics` (or `HEAD`), keep-alive as the client asks.
private final class ScrapeHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let render: @Sendable (Bool) -> [UInt8]
    private let deadline: TimeAmount
    private var head: HTTPRequestHead?
    /// Closes the connection unless the next request has arrived whole by then.
    private var timer: Scheduled<Void>?

    init(render: @escaping @Sendable (Bool) -> [UInt8], deadline: TimeAmount) {
        self.render = render
        self.deadline = deadline
    }

    func handlerAdded(context: ChannelHandlerContext) {
        arm(context)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
    }

    /// The next request is due within `deadline`, however slowly its bytes come.
    private func arm(_ context: ChannelHandlerContext) {
        timer?.cancel()
        let channel = context.channel
        timer = context.eventLoop.scheduleTask(in: deadline) { channel.close(promise: nil) }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head): self.head = head
        case .body: break
        case .end:
            guard let head else { return }
            self.head = nil
            respond(to: head, context: context)
            arm(context)
        }
    }

    /// A scraper that does not read what it asked for is closed, not buffered for.
    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if !context.channel.isWritable { context.close(promise: nil) }
        context.fireChannelWritabilityChanged()
    }

    private func respond(to request: HTTPRequestHead, context: ChannelHandlerContext) {
        let path = request.uri.split(separator: "?", maxSplits: 1).first.map(String.init) ?? request.uri
        let status: HTTPResponseStatus
        var body: [UInt8]
        var contentType = "text/plain; charset=utf-8"
        switch (request.method, path) {
        case (.GET, "/metrics"), (.HEAD, "/metrics"):
            let openMetrics = Exposition.wantsOpenMetrics(accept: request.headers["accept"])
            status = .ok
            body = render(openMetrics)
            contentType = openMetrics ? Exposition.openMetricsContentType : Exposition.prometheusContentType
        case (_, "/metrics"):
            status = .methodNotAllowed
            body = Array("only GET and HEAD\n".utf8)
        default:
            status = .notFound
            body = Array("signupd serves /metrics only\n".utf8)
        }
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: contentType)
        headers.add(name: "Content-Length", value: "\(body.count)")
        headers.add(name: "Cache-Control", value: "no-store")
        if status == .methodNotAllowed { headers.add(name: "Allow", value: "GET, HEAD") }
        let keepAlive = request.isKeepAlive
        if !keepAlive { headers.add(name: "Connection", value: "close") }
        if request.method == .HEAD { body = [] }
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: request.version, status: status, headers: headers))), promise: nil)
        if !body.isEmpty { context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: body)))), promise: nil) }
        let written = context.writeAndFlushAndGetFuture(wrapOutboundOut(.end(nil)))
        if !keepAlive {
            let channel = context.channel
            written.whenComplete { _ in channel.close(promise: nil) }
        }
    }
}

extension ChannelHandlerContext {
    fileprivate func writeAndFlushAndGetFuture(_ data: NIOAny) -> EventLoopFuture<Void> {
        let promise = eventLoop.makePromise(of: Void.self)
        writeAndFlush(data, promise: promise)
        return promise.futureResult
    }
}
