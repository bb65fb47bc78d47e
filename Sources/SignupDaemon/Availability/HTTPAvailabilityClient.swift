import FormEngine
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix

/// The seed's GitHub check, made configurable: GET the template URL for the name;
/// 404 means available, any 2xx taken, anything else (or no answer in time) unreachable.
///
/// Connections are kept alive and reused, at most `maxConnections` open at once for the
/// whole daemon; a check waits for a free one (within its timeout). A cancelled check
/// closes its connection, aborting the request (or leaves the wait).
final class HTTPAvailabilityClient: Sendable {
    let template: AvailabilityURLTemplate
    let timeout: Duration
    let maxConnections: Int

    private struct Waiter {
        let id: UInt64
        let start: @Sendable (Channel?) -> Void
    }

    private struct Pool {
        var open = 0
        var idle: [Channel] = []
        var waiters: [Waiter] = []
        var nextWaiter: UInt64 = 0
    }

    private let pool = NIOLockedValueBox(Pool())
    private let group: EventLoopGroup

    init(template: AvailabilityURLTemplate, timeout: Duration, maxConnections: Int = 16, group: EventLoopGroup) {
        self.template = template
        self.timeout = timeout
        self.maxConnections = maxConnections
        self.group = group
    }

    /// Connections open now (for tests and logs).
    var openConnections: Int { pool.withLockedValue { $0.open } }

    /// Asks the service about a name: `username` in NFC as typed, `key` its identity key
    /// (`AvailabilityURLTemplate`).
    func check(username: String, key: String, cancellation: CheckCancellation, on eventLoop: EventLoop) -> EventLoopFuture<Availability> {
        let promise = eventLoop.makePromise(of: Availability.self)
        let deadline = eventLoop.scheduleTask(in: .nanoseconds(timeout.nanoseconds)) { promise.succeed(.unreachable) }
        let target = template.target(username: username, key: key)
        acquire(cancellation: cancellation, promise: promise) { [self] channel in
            guard let channel else { return promise.succeed(.unreachable) }
            let exchange = Exchange(promise: promise)
            // Abort: closing the connection ends the request; the pool forgets it.
            cancellation.onCancel { channel.close(promise: nil) }
            promise.futureResult.whenComplete { _ in
                cancellation.clear()
                // An answered request leaves a reusable connection; anything else closes it.
                channel.eventLoop.execute { [self] in
                    if exchange.reusable, channel.isActive { release(channel) } else { channel.close(promise: nil) }
                }
            }
            channel.eventLoop.execute { [self] in
                guard channel.isActive, let handler = try? channel.pipeline.syncOperations.handler(type: ResponseHandler.self) else {
                    return promise.succeed(.unreachable)
                }
                handler.begin(exchange)
                var headers = HTTPHeaders()
                headers.add(name: "Host", value: template.port == 80 ? template.host : "\(template.host):\(template.port)")
                headers.add(name: "User-Agent", value: "signupd/\(signupdVersion)")
                let head = HTTPRequestHead(version: .http1_1, method: .GET, uri: target, headers: headers)
                channel.write(HTTPClientRequestPart.head(head), promise: nil)
                channel.writeAndFlush(HTTPClientRequestPart.end(nil), promise: nil)
            }
        }
        promise.futureResult.whenComplete { _ in deadline.cancel() }
        return promise.futureResult
    }

    /// Gives `start` an idle connection, a new one within the cap, or queues it.
    private func acquire(cancellation: CheckCancellation, promise: EventLoopPromise<Availability>, start: @escaping @Sendable (Channel?) -> Void) {
        enum Next { case reuse(Channel), connect, wait(UInt64) }
        let next: Next = pool.withLockedValue { pool in
            while let channel = pool.idle.popLast() {
                if channel.isActive { return .reuse(channel) }
            }
            if pool.open < maxConnections {
                pool.open += 1
                return .connect
            }
            pool.nextWaiter += 1
            pool.waiters.append(Waiter(id: pool.nextWaiter, start: start))
            return .wait(pool.nextWaiter)
        }
        switch next {
        case .reuse(let channel): start(channel)
        case .connect: connect(start)
        case .wait(let id):
            // Leaving the queue: cancelled, or timed out.
            let leave: @Sendable () -> Void = { [self] in
                let removed = pool.withLockedValue { pool in
                    let before = pool.waiters.count
                    pool.waiters.removeAll { $0.id == id }
                    return pool.waiters.count < before
                }
                if removed { promise.succeed(.unreachable) }
            }
            cancellation.onCancel(leave)
            promise.futureResult.whenComplete { _ in leave() }
        }
    }

    private func connect(_ start: @escaping @Sendable (Channel?) -> Void) {
        ClientBootstrap(group: group)
            .connectTimeout(.nanoseconds(timeout.nanoseconds))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    try channel.pipeline.syncOperations.addHandler(ResponseHandler())
                }
            }
            .connect(host: template.host, port: template.port)
            .whenComplete { [self] result in
                switch result {
                case .success(let channel):
                    channel.closeFuture.whenComplete { [self] _ in connectionClosed(channel) }
                    start(channel)
                case .failure:
                    connectionClosed(nil)
                    start(nil)
                }
            }
    }

    /// Back to the pool, or straight to a waiting check.
    private func release(_ channel: Channel) {
        let waiter: Waiter? = pool.withLockedValue { pool in
            if pool.waiters.isEmpty {
                pool.idle.append(channel)
                return nil
            }
            return pool.waiters.removeFirst()
        }
        waiter?.start(channel)
    }

    /// A connection (or an attempt, nil) ended: its slot goes to a waiting check.
    private func connectionClosed(_ channel: Channel?) {
        let waiter: Waiter? = pool.withLockedValue { pool in
            if let channel { pool.idle.removeAll { $0 === channel } }
            if pool.waiters.isEmpty {
                pool.open -= 1
                return nil
            }
            return pool.waiters.removeFirst()  // the slot passes on: `open` stays
        }
        if let waiter { connect(waiter.start) }
    }

    /// One request and its answer on a kept-alive connection.
    private final class Exchange: Sendable {
        let promise: EventLoopPromise<Availability>
        private let complete = NIOLockedValueBox(false)
        init(promise: EventLoopPromise<Availability>) { self.promise = promise }
        /// Whether the whole response was read (the connection can carry another request).
        var reusable: Bool { complete.withLockedValue { $0 } }
        func finished() { complete.withLockedValue { $0 = true } }
    }

    /// Reads one response per request: the status decides, the body is skipped; the
    /// connection is reusable once the response has ended.
    private final class ResponseHandler: ChannelInboundHandler, RemovableChannelHandler {
        typealias InboundIn = HTTPClientResponsePart
        private var exchange: Exchange?
        private var answer: Availability = .unreachable
        private var keepAlive = true

        func begin(_ exchange: Exchange) {
            self.exchange = exchange
            answer = .unreachable
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let head):
                let code = head.status.code
                answer = code == 404 ? .available : (200..<300).contains(code) ? .taken : .unreachable
                keepAlive = head.isKeepAlive
            case .body:
                break
            case .end:
                guard let exchange else { return }
                self.exchange = nil
                if keepAlive { exchange.finished() }
                exchange.promise.succeed(answer)
            }
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            exchange?.promise.succeed(.unreachable)
            exchange = nil
            context.close(promise: nil)
        }

        func channelInactive(context: ChannelHandlerContext) {
            exchange?.promise.succeed(.unreachable)
            exchange = nil
        }
    }
}
