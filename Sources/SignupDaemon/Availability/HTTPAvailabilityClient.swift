import FormEngine
import NIOCore
import NIOHTTP1
import NIOPosix

/// The seed's GitHub check, made configurable: GET the template URL for the name;
/// 404 means available, any 2xx taken, anything else (or no answer in time) unreachable.
struct HTTPAvailabilityClient: Sendable {
    let template: AvailabilityURLTemplate
    let timeout: Duration

    /// Asks the service about a name: `username` in NFC as typed, `key` its identity key
    /// (`AvailabilityURLTemplate`).
    func check(username: String, key: String, on eventLoop: EventLoop) -> EventLoopFuture<Availability> {
        let promise = eventLoop.makePromise(of: Availability.self)
        let nanoseconds = timeout.components.seconds * 1_000_000_000 + timeout.components.attoseconds / 1_000_000_000
        let deadline = eventLoop.scheduleTask(in: .nanoseconds(nanoseconds)) { promise.succeed(.unreachable) }
        let target = template.target(username: username, key: key)
        let host = template.host
        let port = template.port
        ClientBootstrap(group: eventLoop)
            .connectTimeout(.nanoseconds(nanoseconds))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    try channel.pipeline.syncOperations.addHandler(StatusHandler(promise: promise))
                }
            }
            .connect(host: host, port: port)
            .whenComplete { result in
                switch result {
                case .success(let channel):
                    promise.futureResult.whenComplete { _ in channel.close(promise: nil) }
                    var headers = HTTPHeaders()
                    headers.add(name: "Host", value: port == 80 ? host : "\(host):\(port)")
                    headers.add(name: "User-Agent", value: "signupd/\(signupdVersion)")
                    headers.add(name: "Connection", value: "close")
                    let head = HTTPRequestHead(version: .http1_1, method: .GET, uri: target, headers: headers)
                    channel.write(HTTPClientRequestPart.head(head), promise: nil)
                    channel.writeAndFlush(HTTPClientRequestPart.end(nil), promise: nil)
                case .failure:
                    promise.succeed(.unreachable)
                }
            }
        promise.futureResult.whenComplete { _ in deadline.cancel() }
        return promise.futureResult
    }

    /// Completes the check from the status line; a connection that ends first is an error.
    private final class StatusHandler: ChannelInboundHandler, RemovableChannelHandler {
        typealias InboundIn = HTTPClientResponsePart
        private let promise: EventLoopPromise<Availability>

        init(promise: EventLoopPromise<Availability>) {
            self.promise = promise
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            guard case .head(let head) = unwrapInboundIn(data) else { return }
            let code = head.status.code
            promise.succeed(code == 404 ? .available : (200..<300).contains(code) ? .taken : .unreachable)
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            promise.succeed(.unreachable)
            context.close(promise: nil)
        }

        func channelInactive(context: ChannelHandlerContext) {
            promise.succeed(.unreachable)
        }
    }
}
