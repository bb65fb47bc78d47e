import FormEngine
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1

extension HTTPAvailabilityClient {
    /// How a check ended: an answer of the service's, or why there is none.
    enum Outcome: Sendable {
        case answered(Availability)
        case failed(AvailabilityCheckFailure)
    }

    /// One request and its answer on a kept-alive connection.
    final class Exchange: Sendable {
        let promise: EventLoopPromise<Outcome>
        private let complete = NIOLockedValueBox(false)
        init(promise: EventLoopPromise<Outcome>) { self.promise = promise }
        /// Whether the whole response was read (the connection can carry another request).
        var reusable: Bool { complete.withLockedValue { $0 } }
        func finished() { complete.withLockedValue { $0 = true } }
    }

    /// The GET of one check: the URL's path for the name, the service's Host header.
    static func requestHead(target: String, hostHeader: String) -> HTTPRequestHead {
        var headers = HTTPHeaders()
        headers.add(name: "Host", value: hostHeader)
        headers.add(name: "User-Agent", value: "signupd/\(signupdVersion)")
        return HTTPRequestHead(version: .http1_1, method: .GET, uri: target, headers: headers)
    }

    /// Reads one response per request: the status decides, the body is skipped; the
    /// connection is reusable once the response has ended.
    final class ResponseHandler: ChannelInboundHandler, RemovableChannelHandler {
        typealias InboundIn = HTTPClientResponsePart
        private var exchange: Exchange?
        private var outcome: Outcome = .failed(.service("no answer"))
        private var keepAlive = true
        /// Why the connection failed while no request was on it.
        private(set) var closedBecause: String?
        private let https: Bool

        init(https: Bool) { self.https = https }

        func begin(_ exchange: Exchange) {
            self.exchange = exchange
            outcome = .failed(.service("no answer"))
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let head):
                let code = head.status.code
                outcome = code == 404 ? .answered(.available) : (200..<300).contains(code) ? .answered(.taken) : .failed(.service("the service answered HTTP \(code) (only 404 and 2xx are answers)"))
                keepAlive = head.isKeepAlive
            case .body:
                break
            case .end:
                guard let exchange else { return }
                self.exchange = nil
                if keepAlive { exchange.finished() }
                exchange.promise.succeed(outcome)
            }
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            let cause = AvailabilityFailure.describe(error, https: https)
            if let exchange {
                exchange.promise.succeed(.failed(.service(cause)))
            } else if closedBecause == nil {
                closedBecause = cause
            }
            exchange = nil
            context.close(promise: nil)
        }

        func channelInactive(context: ChannelHandlerContext) {
            exchange?.promise.succeed(.failed(.service("the service closed the connection before answering")))
            exchange = nil
        }
    }
}
