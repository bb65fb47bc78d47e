import NIOCore

#if canImport(Glibc)
import Glibc
#endif
import SignupProtocol

/// Splits what signupd sends into lines (the protocol's ``LineFramer``, bounded) and hands
/// each decoded line, and the connection's end, to the connection.
final class LineHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    private var framer: LineFramer
    private let limit: Int
    private let received: (ServerMessage) -> Void
    private let ended: (SignupClientError?) -> Void
    private var failed = false

    init(maxLineBytes: Int, received: @escaping (ServerMessage) -> Void, ended: @escaping (SignupClientError?) -> Void) {
        framer = LineFramer(maxLineBytes: maxLineBytes)
        limit = maxLineBytes
        self.received = received
        self.ended = ended
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !failed else { return }
        let buffer = unwrapInboundIn(data)
        var failure: SignupClientError?
        buffer.withUnsafeReadableBytes { bytes in
            framer.feed(bytes) { frame in
                guard failure == nil else { return }
                switch frame {
                case .line(let line):
                    if let message = ServerMessage(line: line) { received(message) } else { failure = .notJSON }
                case .tooLong:
                    failure = .lineTooLong(limit: limit)
                }
            }
        }
        if let failure { fail(failure, context: context) }
    }

    func channelInactive(context: ChannelHandlerContext) {
        if !failed { ended(nil) }
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        let code = (error as? IOError)?.errnoCode ?? EIO
        fail(.receiveFailed(errno: code), context: context)
    }

    private func fail(_ failure: SignupClientError, context: ChannelHandlerContext) {
        guard !failed else { return }
        failed = true
        ended(failure)
        context.close(promise: nil)
    }
}
