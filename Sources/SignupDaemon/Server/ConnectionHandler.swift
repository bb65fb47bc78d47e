import FormEngine
import Logging
import NIOCore
import NIOPosix
import Protocol

/// One client connection: frames lines, decodes requests, routes them to the sessions
/// this connection holds, and writes replies. Runs on the connection's event loop; form
/// logic is the engine's, blocking work the account service's thread pools'.
final class ConnectionHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// What every connection shares.
    struct Context: Sendable {
        let services: SessionServices
        let limits: ServerLimits
        let expensiveRequestsPerSecond: Int
        /// A connection holding no session is closed after this long without a request.
        let idleConnectionTimeout: TimeAmount?
        /// Unread output of all connections together.
        let outputBudget: OutputBudget
        /// "signupd/VERSION", for `hello`.
        let serverName: String
        let logger: Logger
        /// Carries connections across a restart (issue 16); nil when not under systemd.
        var handover: HandoverCoordinator? = nil

        /// The greeting, naming the forms served now (a reload may change them).
        var hello: ServerEvent {
            .hello(server: serverName, forms: services.forms.library.forms.map(\.name), limits: limits)
        }
    }

    let shared: Context
    // Internal, not private: the handover (Handover/ConnectionHandler+Handover.swift) saves and restores them.
    var framer: LineFramer
    var output: ConnectionOutput?
    /// Sessions held, owned or attached; the last one is the default target.
    var sessions: [Session] = []
    var budget: RequestBudget
    private var admitted = false
    var inputClosed = false
    /// True while a request's answer comes from elsewhere (a token check, a session on
    /// another event loop): later requests wait in `backlog`, and reading pauses, so that
    /// answers leave in request order and `ping` is a true barrier.
    var awaitingReply = false
    var backlog: [Frame] = []
    private var lastRequest = NIODeadline.now()
    private var idleTimer: Scheduled<Void>?
    var backlogHead = 0
    /// Carrying this connection across a restart (issue 16; Handover/).
    var handover = HandoverHooks()

    enum Frame {
        case line([UInt8])
        case tooLong
    }

    init(context: Context) {
        shared = context
        framer = LineFramer(maxLineBytes: context.limits.maxLineBytes)
        budget = RequestBudget(perSecond: context.expensiveRequestsPerSecond)
    }

    func channelActive(context: ChannelHandlerContext) {
        let output = ConnectionOutput(channel: context.channel)
        self.output = output
        output.peer = Self.peerCredentials(of: context.channel)
        output.onSessionEnded = { [weak self] id in self?.sessions.removeAll { $0.id == id } }
        output.onReplyComplete = { [weak self] in self?.replyComplete(context: context) }
        output.outputBudget = shared.outputBudget
        output.onOverBudget = { [weak self] in self?.dropSlowConsumer(context: context, why: "the output budget for all clients is exhausted") }
        switch shared.services.registry.admit(output, uid: output.peer.uid) {
        case .admitted:
            admitted = true
            // Handover (issue 16): a connection carried over from the previous process gets no
            // second hello; a new one is put into systemd's file descriptor store.
            if handover.restoring != nil {
                restoreHandedOver(context: context, output: output)
            } else {
                output.deliver(shared.hello)
                storeForHandover(context: context, output: output)
            }
            armIdleTimer(context: context, at: NIODeadline.now())
        case .tooManyConnections:
            refuse(output, "too many connections (limit \(shared.services.registry.maxConnections))")
        case .tooManyForUser:
            refuse(output, "too many connections for uid \(output.peer.uid) (limit \(shared.services.registry.maxConnectionsPerUID))")
        case .draining:
            refuse(output, "shutdown")
        }
    }

    private func refuse(_ output: ConnectionOutput, _ reason: String) {
        output.deliver(.error(code: .limitExceeded, message: reason, session: nil, id: nil))
        output.deliver(.bye(reason: reason))
        output.channel.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        idleTimer?.cancel()
        guard let output else { return }
        // Handover (issue 16): leaves the file descriptor store, unless handed over.
        guard forgetForHandover(output) else {
            if admitted { shared.services.registry.remove(output, uid: output.peer.uid) }
            return
        }
        output.releaseBudget()
        // These capture the context, which holds this handler, which holds the output: break the cycle.
        output.onReplyComplete = nil
        output.onOverBudget = nil
        for session in sessions { Self.onLoop(of: session) { $0.unsubscribe(output) } }
        sessions.removeAll()
        if admitted { shared.services.registry.remove(output, uid: output.peer.uid) }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard admitted, output != nil else { return }
        lastRequest = .now()
        let buffer = unwrapInboundIn(data)
        buffer.withUnsafeReadableBytes { bytes in
            framer.feed(bytes) { frame in
                switch frame {
                case .line(let line): backlog.append(.line(Array(line)))
                case .tooLong: backlog.append(.tooLong)
                }
            }
        }
        drain(context: context)
    }

    /// Bytes taken from the socket per read: at most some 580 of the shortest requests.
    static let readBytes = 8192
    /// Lines handled per turn before the connection yields its event loop to the others.
    static let linesPerTurn = 128
    /// Request handling pauses while this much of the connection's output is unread
    /// (NIO's buffer; the kernel's socket buffer comes on top).
    private var outputPauseBytes: Int { min(shared.limits.maxOutputBytes / 2, 64 * 1024) }
    private var drainScheduled = false
    private var waitingForOutput = false

    /// Handles buffered request lines, in order, while no answer is awaited, at most
    /// `linesPerTurn` of them, and only while the client reads its answers: a client that
    /// pipelines requests and never reads stops being served (and read) instead of making
    /// the daemon render output for it at the expense of everyone on its event loop.
    /// Reading resumes once the backlog is empty.
    func drain(context: ChannelHandlerContext) {
        // Paused for a handover: the lines wait, and go to the next process.
        guard let output, context.channel.isActive, !handover.paused else { return }
        let wasBatching = output.batching
        output.batching = true
        var handled = 0
        while !awaitingReply, backlogHead < backlog.count, handled < Self.linesPerTurn, output.unreadBytes <= outputPauseBytes {
            let frame = backlog[backlogHead]
            backlogHead += 1
            handled += 1
            switch frame {
            case .line(let line): line.withUnsafeBytes { process($0, output: output) }
            case .tooLong: lineTooLong(output)
            }
        }
        if backlogHead == backlog.count {
            backlog.removeAll(keepingCapacity: false)
            backlogHead = 0
        }
        output.batching = wasBatching
        if !wasBatching { output.flush() }
        if awaitingReply || backlogHead < backlog.count {
            setReading(false, context: context)
        } else if inputClosed {
            closeIfDone()
        } else {
            setReading(true, context: context)
        }
        guard !awaitingReply, backlogHead < backlog.count else { return }
        if output.unreadBytes > outputPauseBytes {
            // Wait for the client to read; the write's completion resumes.
            guard !waitingForOutput else { return }
            waitingForOutput = true
            output.whenWritten { [self] in
                waitingForOutput = false
                drain(context: context)
            }
        } else if !drainScheduled {
            // A full turn: let the loop's other connections (and I/O) in first. A delay,
            // not `execute`: NIO runs immediate tasks until none are left before polling.
            drainScheduled = true
            output.flush()
            context.eventLoop.assumeIsolated().scheduleTask(in: .milliseconds(1)) { [self] in
                drainScheduled = false
                drain(context: context)
            }
        }
    }

    var reading = true
    func setReading(_ on: Bool, context: ChannelHandlerContext) {
        guard reading != on else { return }
        reading = on
        context.channel.setOption(ChannelOptions.autoRead, value: on).whenComplete { _ in }
    }

    /// Closes the connection, with `bye`, once it has held no session and sent nothing
    /// for `idleConnectionTimeout`; otherwise checks again when that could next be true.
    private func armIdleTimer(context: ChannelHandlerContext, at from: NIODeadline) {
        guard let timeout = shared.idleConnectionTimeout else { return }
        idleTimer = context.eventLoop.assumeIsolated().scheduleTask(deadline: from + timeout) { [self] in
            guard let output, context.channel.isActive else { return }
            let due = lastRequest + timeout
            if sessions.isEmpty, !awaitingReply, due <= .now() {
                output.enqueue(.bye(reason: "idle: no request for \(timeout.nanoseconds / 1_000_000_000) seconds"))
                output.flush()
                context.close(promise: nil)
            } else {
                // Held sessions, or a request since: look again one timeout after the later of the two.
                armIdleTimer(context: context, at: due > .now() ? lastRequest : .now())
            }
        }
    }

    private func lineTooLong(_ output: ConnectionOutput) {
        output.enqueue(.error(code: .lineTooLong, message: "line longer than \(shared.limits.maxLineBytes) bytes; discarded", session: nil, id: nil))
    }

    /// The awaited answer has been delivered: the requests that waited behind it run now.
    private func replyComplete(context: ChannelHandlerContext) {
        guard awaitingReply else { return }
        awaitingReply = false
        drain(context: context)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        guard let output else { return }
        output.batching = false
        output.flush()
        if inputClosed { closeIfDone() }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard let event = event as? ChannelEvent, event == .inputClosed, let output else {
            context.fireUserInboundEventTriggered(event)
            return
        }
        // The client has sent all it will: answer the last line, finish pending work, close.
        framer.finish { frame in
            guard case .line(let line) = frame else { return }
            backlog.append(.line(Array(line)))
        }
        inputClosed = true
        output.afterDelivery = { [weak self] in self?.closeIfDone() }
        drain(context: context)
        closeIfDone()
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        guard let output else { return }
        output.reportUnread()
        guard !context.channel.isWritable else { return }
        // The client does not read: it must not make the daemon buffer without bound.
        dropSlowConsumer(context: context, why: "more than \(shared.limits.maxOutputBytes) bytes unread")
    }

    private func dropSlowConsumer(context: ChannelHandlerContext, why: String) {
        guard let output, context.channel.isActive else { return }
        shared.logger.notice("dropping a client that stopped reading", metadata: ["pid": "\(output.peer.pid)", "why": "\(why)"])
        output.onOverBudget = nil
        output.enqueue(.bye(reason: "slow consumer: \(why)"))
        output.flush()
        context.close(promise: nil)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        shared.logger.debug("connection error", metadata: ["error": "\(error)"])
        context.close(promise: nil)
    }

    private func closeIfDone() {
        guard inputClosed, !awaitingReply, backlogHead == backlog.count, let output else { return }
        let busy = sessions.contains { $0.eventLoop === output.eventLoop && $0.hasPendingWork }
        if !busy { output.channel.close(promise: nil) }
    }

    /// Closes the connection for shutdown with a `bye`.
    static func sayGoodbye(_ output: ConnectionOutput, reason: String) {
        output.eventLoop.execute {
            output.enqueue(.bye(reason: reason))
            output.flush()
            output.channel.close(promise: nil)
        }
    }

    private static func peerCredentials(of channel: Channel) -> PeerCredentials {
        guard let provider = channel as? SocketOptionProvider else { return .unknown }
        let future: EventLoopFuture<PeerCredentials> = provider.unsafeGetSocketOption(
            level: SocketOptionLevel(SOL_SOCKET), name: SocketOptionName(SO_PEERCRED)
        )
        // On the channel's own loop the future is already complete.
        var credentials = PeerCredentials.unknown
        future.assumeIsolated().whenSuccess { credentials = $0 }
        return credentials
    }
}
