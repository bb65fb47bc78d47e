import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket

/// The HTTP and WebSocket server: SwiftNIO's HTTP/1.1 pipeline with its WebSocket upgrader,
/// on the sockets systemd passed (socket activation) or on `--listen` addresses.
struct WebServer: Sendable {
    enum Listener: Sendable, Equatable {
        case address(host: String, port: Int)
        /// A listening socket systemd passed.
        case descriptor(Int32)
    }

    enum Connection: Sendable {
        case webSocket(NIOAsyncChannel<WebSocketFrame, WebSocketFrame>, BrowserFlow)
        case http(NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>, ClientAddressing.Origin)
    }

    let configuration: WebConfiguration
    let logger: Logger
    let group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    private let app: WebApp
    private let relay: WebSocketRelay
    private let addressing: ClientAddressing
    private let webSockets: AddressLimits
    private let peers: AddressLimits
    private let open = NIOLockedValueBox(0)

    init(configuration: WebConfiguration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
        let claims = LoginClaims()
        app = WebApp(configuration: configuration, claims: claims, logger: logger)
        relay = WebSocketRelay(configuration: configuration, claims: claims, logger: logger)
        addressing = ClientAddressing(trustedProxies: configuration.trustedProxies)
        webSockets = AddressLimits(limit: configuration.maxWebSocketsPerAddress)
        peers = AddressLimits(limit: configuration.maxConnectionsPerAddress)
    }

    /// Serves every listener until the process ends; `ready` is told each bound address.
    func run(_ listeners: [Listener], ready: @escaping @Sendable (SocketAddress?) -> Void = { _ in }) async throws {
        try await withThrowingDiscardingTaskGroup { group in
            for listener in listeners {
                let server = try await bind(listener)
                ready(server.channel.localAddress)
                group.addTask {
                    try await withThrowingDiscardingTaskGroup { connections in
                        try await server.executeThenClose { inbound in
                            for try await negotiated in inbound {
                                connections.addTask { await serve(negotiated) }
                            }
                        }
                    }
                }
            }
        }
    }

    private func bind(_ listener: Listener) async throws -> NIOAsyncChannel<EventLoopFuture<Connection>, Never> {
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 1024)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
        switch listener {
        case .address(let host, let port):
            return try await bootstrap.bind(host: host, port: port) { channel in self.setUp(channel) }
        case .descriptor(let fd):
            return try await bootstrap.bind(fd) { channel in self.setUp(channel) }
        }
    }

    private func serve(_ negotiated: EventLoopFuture<Connection>) async {
        do {
            switch try await negotiated.get() {
            case .webSocket(let channel, let flow):
                await relay.run(channel, flow: flow)
                if let address = flow.address { webSockets.release(address) }
            case .http(let channel, let origin):
                try await serveHTTP(channel, origin: origin)
            }
        } catch {
            logger.debug("a connection ended", metadata: ["error": "\(error)"])
        }
    }

    // MARK: The pipeline

    private func setUp(_ channel: any Channel) -> EventLoopFuture<EventLoopFuture<Connection>> {
        let limit = configuration.maxConnections
        let admitted = open.withLockedValue { open in
            guard open < limit else { return false }
            open += 1
            return true
        }
        guard admitted else { return channel.eventLoop.makeFailedFuture(ChannelError.inappropriateOperationForState) }
        channel.closeFuture.whenComplete { [open] _ in open.withLockedValue { $0 -= 1 } }
        // One peer's share of the connections (a trusted proxy speaks for many: nginx limits those).
        if let peer = channel.remoteAddress?.ipAddress.map(ClientAddressing.canonical), !configuration.trustedProxies.contains(peer) {
            guard peers.take(peer) else { return channel.eventLoop.makeFailedFuture(ChannelError.inappropriateOperationForState) }
            channel.closeFuture.whenComplete { [peers] _ in peers.release(peer) }
        }
        let configuration = configuration
        let addressing = addressing
        let webSockets = webSockets
        let origins = configuration.origins
        return channel.eventLoop.makeCompletedFuture {
            let handlers = channel.pipeline.syncOperations
            // The first request's head must be in within the request timeout, however slowly
            // it trickles; a peer that sends nothing for a minute is closed (a WebSocket turns both off).
            try handlers.addHandler(FirstRequestDeadline(limit: configuration.requestTimeout), name: "first-request")
            try handlers.addHandler(IdleStateHandler(readTimeout: configuration.keepAliveTimeout), name: "idle")
            try handlers.addHandler(IdleCloser(), name: "idle-closer")
            let upgrader = NIOTypedWebSocketServerUpgrader<Connection>(
                maxFrameSize: configuration.maxFrameBytes,
                shouldUpgrade: { channel, head in
                    let origin = Self.origin(of: head, channel: channel, addressing: addressing)
                    guard Self.pathOf(head.uri) == "/ws", origins.allowsWebSocket(head.headers, https: origin.https) else {
                        return channel.eventLoop.makeSucceededFuture(nil)
                    }
                    if let address = origin.address, !webSockets.take(address) { return channel.eventLoop.makeSucceededFuture(nil) }
                    return channel.eventLoop.makeSucceededFuture(HTTPHeaders())
                },
                upgradePipelineHandler: { channel, head in
                    channel.eventLoop.makeCompletedFuture {
                        let origin = Self.origin(of: head, channel: channel, addressing: addressing)
                        let handlers = channel.pipeline.syncOperations
                        // A person may keep a form open for as long as they like.
                        for name in ["first-request", "idle", "idle-closer"] { handlers.removeHandler(name: name).whenFailure { _ in } }
                        try handlers.addHandler(
                            NIOWebSocketFrameAggregator(minNonFinalFragmentSize: 1, maxAccumulatedFrameCount: 64, maxAccumulatedFrameSize: configuration.maxFrameBytes))
                        let names = BrowserFlow.CookieNames(secure: origin.https || configuration.alwaysSecureCookies)
                        let flow = BrowserFlow(cookies: Cookies.parse(head.headers["Cookie"]), address: origin.address, names: names)
                        return .webSocket(try NIOAsyncChannel(wrappingChannelSynchronously: channel), flow)
                    }
                })
            let upgrade = NIOTypedHTTPServerUpgradeConfiguration<Connection>(
                upgraders: [upgrader],
                notUpgradingCompletionHandler: { channel in
                    channel.eventLoop.makeCompletedFuture {
                        let handlers = channel.pipeline.syncOperations
                        handlers.removeHandler(name: "first-request").whenFailure { _ in }
                        try handlers.addHandler(RequestDeadline(limit: configuration.requestTimeout, keepAlive: configuration.keepAliveTimeout))
                        let origin = Self.origin(of: nil, channel: channel, addressing: addressing)
                        return .http(try NIOAsyncChannel(wrappingChannelSynchronously: channel), origin)
                    }
                })
            let negotiated = try handlers.configureUpgradableHTTPServerPipeline(configuration: .init(upgradeConfiguration: upgrade))
            // A request the HTTP parser refused (it answered 400): nothing more to read here.
            negotiated.whenFailure { _ in channel.close(promise: nil) }
            return negotiated
        }
    }

    static func origin(of head: HTTPRequestHead?, channel: any Channel, addressing: ClientAddressing) -> ClientAddressing.Origin {
        addressing.origin(peer: channel.remoteAddress, forwardedFor: head?.headers["X-Forwarded-For"] ?? [], forwardedProto: head?.headers.first(name: "X-Forwarded-Proto"))
    }

    static func pathOf(_ uri: String) -> Substring {
        uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
    }

    // MARK: HTTP

    private func serveHTTP(_ channel: NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>, origin: ClientAddressing.Origin) async throws {
        try await channel.executeThenClose { inbound, outbound in
            var head: HTTPRequestHead?
            var body: [UInt8] = []
            for try await part in inbound {
                switch part {
                case .head(let requestHead):
                    head = requestHead
                    body = []
                case .body(let buffer):
                    body += buffer.readableBytesView
                    if body.count > configuration.maxBodyBytes {
                        try await write(WebResponse(.payloadTooLarge, text: "request body larger than \(configuration.maxBodyBytes) bytes"), keepAlive: false, head: head, to: outbound)
                        return
                    }
                case .end:
                    guard let requestHead = head else {
                        // An upgrade the WebSocket upgrader refused (a wrong Origin, a full
                        // address): SwiftNIO passes on only its `.end` (apple/swift-nio#2632).
                        try await write(Self.refusedUpgrade, keepAlive: false, head: nil, to: outbound)
                        return
                    }
                    let request = WebRequest(head: requestHead, body: body, origin: Self.origin(of: requestHead, channel: channel.channel, addressing: addressing))
                    let response = await app.respond(to: request)
                    try await write(response, keepAlive: requestHead.isKeepAlive, head: requestHead, to: outbound)
                    if !requestHead.isKeepAlive { return }
                    head = nil
                }
            }
        }
    }

    static let refusedUpgrade = WebResponse(.forbidden, text: "WebSocket refused: the page's origin is not allowed, or this address holds too many connections")

    private func write(_ response: WebResponse, keepAlive: Bool, head: HTTPRequestHead?, to outbound: NIOAsyncChannelOutboundWriter<HTTPServerResponsePart>) async throws {
        var headers = HTTPHeaders(response.headers)
        headers.add(name: "Content-Length", value: String(response.body.count))
        if !keepAlive { headers.add(name: "Connection", value: "close") }
        try await outbound.write(.head(HTTPResponseHead(version: .http1_1, status: response.status, headers: headers)))
        if head?.method != .HEAD, !response.body.isEmpty { try await outbound.write(.body(.byteBuffer(ByteBuffer(bytes: response.body)))) }
        try await outbound.write(.end(nil))
    }
}

/// Closes a connection its IdleStateHandler found idle.
final class IdleCloser: ChannelInboundHandler, RemovableChannelHandler, Sendable {
    typealias InboundIn = NIOAny

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let idle = event as? IdleStateHandler.IdleStateEvent, idle == .read {
            context.close(promise: nil)
        } else {
            context.fireUserInboundEventTriggered(event)
        }
    }
}
