import NIOCore
import NIOHTTP1

/// Closes a connection whose first request head has not arrived within `limit` of its
/// accept, however slowly its bytes trickle in (a slowloris); removed by name once the head
/// is in and the connection is HTTP or a WebSocket.
final class FirstRequestDeadline: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny
    private let limit: TimeAmount
    private var deadline: Scheduled<Void>?

    init(limit: TimeAmount) { self.limit = limit }

    func handlerAdded(context: ChannelHandlerContext) {
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        deadline = context.eventLoop.scheduleTask(in: limit) { loopBound.value.close(promise: nil) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        deadline?.cancel()
    }
}

/// For plain HTTP: a request's head and body must arrive within `limit` of its start, and
/// the next request within `keepAlive` of the last answer, bytes trickling in or not.
final class RequestDeadline: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    private let limit: TimeAmount
    private let keepAlive: TimeAmount
    private var deadline: Scheduled<Void>?

    init(limit: TimeAmount, keepAlive: TimeAmount) {
        self.limit = limit
        self.keepAlive = keepAlive
    }

    /// Added once the first head is in: its body is on the clock already.
    func handlerAdded(context: ChannelHandlerContext) {
        arm(limit, context: context)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        deadline?.cancel()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head: arm(limit, context: context)
        case .body: break
        case .end:
            // Handled from here on: the answer is the bridge's to give.
            deadline?.cancel()
            deadline = nil
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        // The answer is out: the next request has `keepAlive` to arrive.
        if case .end = unwrapOutboundIn(data) { arm(keepAlive, context: context) }
        context.write(data, promise: promise)
    }

    private func arm(_ amount: TimeAmount, context: ChannelHandlerContext) {
        deadline?.cancel()
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        deadline = context.eventLoop.scheduleTask(in: amount) { loopBound.value.close(promise: nil) }
    }
}
