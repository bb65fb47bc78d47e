import NIOCore
import NIOPosix

/// Answers every newline it reads with one fixed line of the size of signupd's `validation`
/// event, which has both words ndjson-load waits for ("pong" to start, "validation" per
/// request); greets on connect. Parses nothing, keeps no state: SwiftNIO's own cost.
final class FixedAnswer: ChannelInboundHandler, Sendable {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    static let hello = ByteBuffer(string: #"{"event":"hello","protocol":"signup/1","server":"nio-floor"}"# + "\n")
    static let answer = ByteBuffer(
        string: #"{"event":"validation","session":"dd293999b39b2fdd","seq":7,"field":"password","state":"ok","#
            + #""message":"Password acceptable","messageId":"password.acceptable","params":{},"pong":true}"# + "\n"
    )

    func channelActive(context: ChannelHandlerContext) {
        context.writeAndFlush(wrapOutboundOut(Self.hello), promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let input = unwrapInboundIn(data)
        let lines = input.withUnsafeReadableBytes { bytes in bytes.reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) } }
        guard lines > 0 else { return }
        var output = context.channel.allocator.buffer(capacity: Self.answer.readableBytes * lines)
        for _ in 0..<lines { output.writeImmutableBuffer(Self.answer) }
        context.writeAndFlush(wrapOutboundOut(output), promise: nil)
    }
}

// usage: nio-floor SOCKET [EVENT-LOOPS]   (default: one per core, as signupd)
let arguments = CommandLine.arguments
guard arguments.count >= 2 else { fatalError("usage: nio-floor SOCKET [EVENT-LOOPS]") }
let loops = arguments.count > 2 ? Int(arguments[2]) ?? System.coreCount : System.coreCount
let group = MultiThreadedEventLoopGroup(numberOfThreads: loops)
let server = try await ServerBootstrap(group: group)
    .serverChannelOption(.backlog, value: 4096)
    .childChannelInitializer { channel in
        channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(FixedAnswer()) }
    }
    .bind(unixDomainSocketPath: arguments[1], cleanupExistingSocketFile: true).get()
try await server.closeFuture.get()
