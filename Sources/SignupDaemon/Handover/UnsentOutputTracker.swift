import NIOCore

/// Keeps the output written to a connection until the kernel has taken it, so that a
/// handover can pass on exactly the bytes the client has not been sent yet: NIO knows how
/// many bytes are still buffered (`bufferedWritableBytes`), this knows which.
final class UnsentOutputTracker: ChannelOutboundHandler {
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private var inFlight = CircularBuffer<ByteBuffer>()

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let buffer = unwrapOutboundIn(data)
        inFlight.append(buffer)
        let promise = promise ?? context.eventLoop.makePromise()
        // Writes complete in order: the oldest tracked buffer is the one done.
        promise.futureResult.assumeIsolated().whenComplete { [self] _ in
            if !inFlight.isEmpty { inFlight.removeFirst() }
        }
        context.write(data, promise: promise)
    }

    /// The last `buffered` bytes written (what NIO still holds), in order.
    func unsent(buffered: Int) -> [UInt8] {
        guard buffered > 0 else { return [] }
        var bytes: [UInt8] = []
        for buffer in inFlight { bytes.append(contentsOf: buffer.readableBytesView) }
        return Array(bytes.suffix(buffered))
    }
}
