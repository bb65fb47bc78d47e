import FormEngine
import Logging
import NIOCore
import NIOPosix
import SignupProtocol

/// One client connection: frames lines, decodes requests, routes them to the sessions
/// this connection holds, and writes replies. Runs on the connection's event loop; form
/// logic is the engine's, blocking work the account service's thread pools'.
final class ConnectionHandler: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// What every connection shares.
    struct Context: Sendable {
        let services: SessionServices
        /// The daemon's limits, rates and timeouts (the same value tests start from).
        let tuning: DaemonTuning
        /// Each event loop's handling, shared per uid (`FairTurns`).
        let fairTurns: FairTurnsByLoop
        /// "signupd/VERSION", for `hello`.
        let serverName: String
        let logger: Logger
        /// Carries connections across a restart (issue 16); nil when not under systemd.
        var handover: HandoverCoordinator? = nil
        /// Which peers may name the clients they speak for (`client` op).
        var trustedBridges = TrustedBridges.none
        /// Who may pause sign-up and see everything in `status` and `sessions` (issue 26).
        var administrators = Administrators(uids: [0])
        /// When the process started, for `status`.
        var started = NIODeadline.now()
        /// The store's kind and where it is, for `status`.
        var storeDescription = "memory"
        /// Closed while the start finishes after the socket is served: requests wait for it.
        var startGate = StartGate()

        var limits: ServerLimits { tuning.limits }
        /// Unhandled input and unread output of all connections together.
        var bufferBudget: BufferBudget { services.bufferBudget }
        /// A connection holding no session is closed after this long without a request.
        var idleConnectionTimeout: TimeAmount? { tuning.idleConnectionSeconds.map { .seconds(Int64($0)) } }

        /// The greeting, naming the forms served now (a reload may change them).
        var hello: ServerEvent {
            .hello(server: serverName, forms: services.forms.library.forms.map(\.name), limits: limits)
        }
    }

    let shared: Context
    /// The pipeline and the lifecycle: every decision about reading, handling, waiting and
    /// closing is its (`let action = state.x(); run(action)`).
    var state = ConnectionStateMachine()
    // Internal, not private: the handover (Handover/ConnectionHandler+Handover.swift) saves and restores them.
    var framer: LineFramer
    var output: ConnectionOutput?
    /// This connection's holds on sessions, owned or attached, in the order taken; the last
    /// one still held is the default target. A hold the session has ended stays until the
    /// next look (`liveHolds`), so that a request naming it hears that it ended.
    var holds: [SessionHold] = []
    /// The ids of the latest sessions it held that have ended (`remember(ended:)`).
    var endedSessions: [String] = []
    var budget: RequestBudget
    /// `verify` and `logout`: a budget of their own (`DaemonTuning.tokenChecksPerSecond`).
    var tokenBudget: RequestBudget
    private var lastRequest: NIODeadline
    /// On the loop's `LoopTimers`, like sessions' idle checks: a NIO task per connection made
    /// every close search all the others'.
    private var idleTimer: LoopTimers.Token?
    /// Carrying this connection across a restart (issue 16; Handover/).
    var handover = HandoverHooks()
    /// Set between `handlerAdded` and `handlerRemoved`.
    private var context: ChannelHandlerContext?
    /// The peer is a trusted front end (`TrustedBridges`): it may name a client, once,
    /// before its first session.
    var isTrustedBridge = false
    /// Whether the connection has held a session yet (`client` must come before).
    var hasHeldSession = false
    /// The daemon ended the connection itself (`end`): its sessions end with it.
    private var endedByDaemon = false
    /// `output.principal.key`, kept on the loop for the per-turn share (`FairTurns`).
    var principalKey = PeerKey(uid: UInt32.max)

    typealias Frame = ConnectionStateMachine.Frame

    /// The peer's credentials when the channel has none to ask (a testing channel); a
    /// socket's `SO_PEERCRED` otherwise.
    private let givenPeer: PeerCredentials?

    init(context: Context, peer: PeerCredentials? = nil) {
        shared = context
        givenPeer = peer
        framer = LineFramer(maxLineBytes: context.limits.maxLineBytes)
        budget = RequestBudget(perSecond: context.tuning.expensiveRequestsPerSecond, clock: context.services.clock)
        tokenBudget = RequestBudget(perSecond: context.tuning.tokenChecksPerSecond, clock: context.services.clock)
        lastRequest = context.services.clock.now()
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    func channelActive(context: ChannelHandlerContext) {
        turns = shared.fairTurns.turns(on: context.eventLoop)
        let output = ConnectionOutput(
            channel: context.channel, peer: givenPeer ?? Self.peerCredentials(of: context.channel), clock: shared.services.clock, reporting: shared.services.reporting
        )
        self.output = output
        output.bufferBudget = shared.bufferBudget
        output.turns = turns
        let registry = shared.services.registry
        let now = shared.services.clock.now()
        // Handover (issue 16): a connection carried over from the previous process was
        // admitted there; it gets no second hello, and the output it was not sent first.
        if let record = handover.restoring {
            if let client = record.client { output.speak(for: Principal(uid: output.peer.uid, client: client, address: record.address.flatMap(ClientAddress.init))) }
            hasHeldSession = true
            principalKey = output.principal.key
            registry.adopt(output, key: principalKey)
            restoreHandedOver(context: context, output: output)
            armIdleTimer(context: context, at: now)
            return
        }
        principalKey = output.principal.key
        isTrustedBridge = !shared.trustedBridges.isEmpty && shared.trustedBridges.trust(output.peer, on: context.channel)
        let answer = registry.admit(output, uid: output.peer.uid, bridge: isTrustedBridge, now: now)
        switch state.admission(
            answer, uid: output.peer.uid, maxConnections: registry.maxConnections,
            maxConnectionsPerUID: isTrustedBridge ? registry.maxConnectionsPerBridge : registry.maxConnectionsPerUID,
            connectsPerUIDPerSecond: registry.connectsPerUIDPerSecond, bridge: isTrustedBridge
        ) {
        case .greet:
            shared.logger.debug("connection", metadata: output.principal.logMetadata(pid: output.peer.pid))
            output.deliver(shared.hello)
            if case .admittedDisplacing(let victim, let victimKey, let held) = answer {
                let who = victim.principal
                shared.services.reporting.log.log(.notice, "displaced: the server is full; closing a connection of the peer holding the most to admit another", peer: victimKey, metadata: who.logMetadata(pid: victim.peer.pid, [
                    "held": "\(held)", "admitted": "\(output.peer.uid)", "admitted_pid": "\(output.peer.pid)",
                ]))
                victim.end(.displaced(maxConnections: registry.maxConnections, peer: victimKey, held: held))
            }
            waitForStart(on: context.eventLoop)
            armIdleTimer(context: context, at: now)
        case .refuse(let failure):
            // The refusal, then `bye` with the same words.
            endedByDaemon = true
            shared.services.reporting.metrics.connectionClosed("refused")
            Self.refuse(failure, id: nil, output: output)
            output.close(saying: .bye(reason: failure.message))
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        if let idleTimer { shared.services.loopTimers.timers(on: context.eventLoop).cancel(idleTimer) }
        idleTimer = nil
        for waiter in handover.takeReplyWaiters() { waiter.succeed() }
        guard let output else { return }
        // The client went away (it closed or reset its socket, or half-closed it and its
        // work is done), not a close the daemon decided: its sessions wait for `resume`.
        let dropped = !endedByDaemon
        if dropped { shared.services.reporting.closed(nil) }
        shared.logger.debug("connection closed", metadata: output.principal.logMetadata(pid: output.peer.pid, ["by": dropped ? "client" : "signupd", "sessions": "\(holds.count)"]))
        let action = state.inactive()
        output.releaseBudget()
        // Handover (issue 16): leaves the file descriptor store, unless handed over (then
        // the sessions stay as they were saved: no unsubscribing).
        if forgetForHandover(output) {
            for hold in holds where !hold.hasEnded { onLoop(of: hold.session) { $0.unsubscribe(hold, dropped: dropped) } }
            holds.removeAll()
        }
        if case .release(deregister: true) = action { shared.services.registry.remove(output, key: output.principal.key) }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        // Input arriving inside our own flush is NIO emptying the socket after a failed
        // write: the client is gone and what it left is dropped, not handled.
        if let output, output.flushing {
            clientGone(output)
            return
        }
        guard state.readsRequests, let output else { return }
        lastRequest = shared.services.clock.now()
        touchForHandover(output: output, now: lastRequest)
        let buffer = unwrapInboundIn(data)
        buffer.withUnsafeReadableBytes { bytes in
            framer.feed(bytes) { frame in
                switch frame {
                case .line(let line): state.received(.line(Array(line)))
                case .tooLong: state.received(.tooLong)
                }
            }
        }
        switch state.receivedAll() {
        case .drain: drain()
        // A drain is due already (the next turn, the client reading, the end of a
        // handover's pause): it handles these lines.
        case .wait, .ignore: output.setInputHeld(state.backlogBytes + framer.bufferedBytes)
        }
    }

    /// NIO asks to read: passed on only while nothing waits to be handled, or little while
    /// the connection waits for its turn (the state machine holds it back otherwise, and
    /// passes it on once the backlog is handled: `ConnectionStateMachine.readAheadBytes`).
    func read(context: ChannelHandlerContext) {
        switch state.readRequested() {
        case .read: context.read()
        case .hold: break
        }
    }

    /// Bytes taken from the socket per read: at most some 580 of the shortest requests.
    static let readBytes = 8192
    /// How connections read: at most `readBytes` a read (bounded work per readiness event),
    /// starting at 1 KiB and growing only while reads fill the buffer. NIO keeps each
    /// channel's last read buffer for reuse, so an idle connection holds what its reads
    /// needed — a fixed 8 KiB allocator made every held session cost 8 KiB more
    /// (BENCHMARKS.md, "idle open sessions").
    static var recvAllocator: AdaptiveRecvByteBufferAllocator {
        AdaptiveRecvByteBufferAllocator(minimum: 64, initial: 1024, maximum: readBytes)
    }
    /// SO_SNDBUF of a client socket (the kernel doubles it for its bookkeeping).
    static let kernelSendBufferBytes = 32 * 1024
    /// Lines handled per turn before the connection yields its event loop to the others
    /// (and at most its uid's share of the turn, `FairTurns`).
    static let linesPerTurn = 128
    /// Request handling pauses while this much of the connection's output is unread
    /// (NIO's buffer; the kernel's socket buffer comes on top).
    private var outputPauseBytes: Int { min(shared.limits.maxOutputBytes / 2, 64 * 1024) }
    /// This loop's turns; set when the connection becomes active.
    private var turns: FairTurns?

    /// Handles buffered request lines, in order, while no answer is awaited, at most
    /// `linesPerTurn` of them and no more than its uid's share of this loop's turn, and
    /// only while the client reads its answers: a client that pipelines requests and never
    /// reads stops being served (and read) instead of making the daemon render output for
    /// it at the expense of everyone on its event loop.
    func drain() {
        guard let output, let turns, output.channel.isActive, state.mayDrain else { return }
        let share = turns.share(of: principalKey, upTo: state.hasBacklog ? Self.linesPerTurn : 0)
        var handled = 0
        // The answers to these lines leave in one write.
        output.batch {
            while state.canHandleNext, share.allows(handled), output.unreadBytes <= outputPauseBytes, let frame = state.nextFrame() {
                handled += 1
                switch frame {
                case .line(let line): line.withUnsafeBytes { process($0, output: output) }
                case .tooLong: lineTooLong(output)
                }
            }
            output.setInputHeld(state.backlogBytes + framer.bufferedBytes)
        }
        // Counted once that write is done: sending the answers is the uid's work too (a big
        // reply costs its writing as well as its building).
        turns.spend(share, lines: handled)
        switch state.drainEnded(outputFull: output.unreadBytes > outputPauseBytes) {
        case .none: break
        case .read: context?.read()
        case .checkDone: closeIfDone()
        case .waitForOutput:
            // The write's completion resumes.
            output.whenWritten { [self] in woke() }
        case .waitForTurn:
            // A full turn, or the uid's share of it: the loop's other connections (and
            // I/O) go first; `FairTurns` resumes this one in its uid's place.
            output.flush()
            turns.waitForTurn(ObjectIdentifier(self), peer: principalKey) { [self] in woke() }
        }
    }

    /// Greeted before the start has finished (the store still opening: `StartGate`): paused,
    /// reading nothing, until it has; told and closed if it failed.
    private func waitForStart(on eventLoop: EventLoop) {
        guard !shared.startGate.isOpen else { return }
        let handler = NIOLoopBound(self, eventLoop: eventLoop)
        switch shared.startGate.whenStarted({ outcome in eventLoop.execute { handler.value.started(outcome) } }) {
        case nil: state.pause()
        case .opened: break
        case .failed: end(.shutdown(ServerEvent.startFailedReason))
        }
    }

    private func started(_ outcome: StartGate.Outcome) {
        switch outcome {
        case .opened: if state.resume() == .drain { drain() }
        case .failed: end(.shutdown(ServerEvent.startFailedReason))
        }
    }

    /// The turn or the output room a drain waited for came.
    private func woke() {
        if state.woke() == .drain { drain() }
    }

    /// Closes the connection, with `bye`, once it has held no session and sent nothing
    /// for `idleConnectionTimeout`, or — sessions or not — once the client has read none
    /// of its pending answers for that long (it stopped reading: a paused pipeliner would
    /// otherwise hold its sessions and buffers forever); otherwise checks again when that
    /// could next be true.
    private func armIdleTimer(context: ChannelHandlerContext, at from: NIODeadline) {
        guard let timeout = shared.idleConnectionTimeout else { return }
        idleTimer = shared.services.loopTimers.timers(on: context.eventLoop).schedule(at: from + timeout) { [self] in
            idleTimer = nil
            guard let output, context.channel.isActive else { return }
            let due = lastRequest + timeout
            let now = shared.services.clock.now()
            if let stuck = output.outputStuckSince, stuck + timeout <= now {
                shared.services.reporting.log.log(.notice, "closing a client that stopped reading", peer: principalKey, metadata: output.principal.logMetadata(pid: output.peer.pid, ["unread": "\(output.unreadBytes)"]))
                end(.stuck(seconds: timeout.nanoseconds / 1_000_000_000))
            } else if liveHolds.isEmpty, !state.awaitingReply, due <= now, output.outputStuckSince == nil {
                end(.idle(seconds: timeout.nanoseconds / 1_000_000_000))
            } else {
                // Held sessions, or a request since: look again one timeout after the later
                // of the two — or, while its answers are unread, when the stuck close is due
                // (one timeout after output last moved), whichever is first. Unread answers
                // make it stuck, not idle: helper-40's client, writing 600 KB before reading,
                // was told "idle" and nothing was logged, and helper-41's, holding a session,
                // was closed only after twice the timeout.
                let next = due > now ? lastRequest : now
                armIdleTimer(context: context, at: output.outputStuckSince.map { min($0, next) } ?? next)
            }
        }
    }

    private func lineTooLong(_ output: ConnectionOutput) {
        Self.refuse(.lineTooLong(maxBytes: shared.limits.maxLineBytes), id: nil, output: output)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        guard let output else { return }
        output.flush()
        closeIfDone()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? ConnectionOutputEvent {
            return outputSaid(event)
        }
        guard let event = event as? ChannelEvent, event == .inputClosed, let output else {
            context.fireUserInboundEventTriggered(event)
            return
        }
        // The client has sent all it will: answer the last line, finish pending work, close.
        guard state.inputClosed() == .finishInput else { return }
        framer.finish { frame in
            guard case .line(let line) = frame else { return }
            state.finishedLine(.line(Array(line)))
        }
        output.reportsDeliveries = true
        drain()
        closeIfDone()
    }

    /// What the connection's output tells it (`ConnectionOutputEvent`).
    private func outputSaid(_ event: ConnectionOutputEvent) {
        switch event {
        case .replyComplete:
            // The awaited answer has been delivered: the requests that waited behind it run
            // now. A handover waiting for it looks again once the state machine knows (it
            // saves the connection then; told before, it found the answer still awaited and
            // left the connection out).
            let action = state.replied()
            for waiter in handover.takeReplyWaiters() { waiter.succeed() }
            if action == .drain { drain() }
        case .delivered:
            // Once the events published with this one are out too (a result and its
            // `busy: false` are delivered one by one): decided on the next tick.
            output?.eventLoop.assumeIsolated().execute { [self] in closeIfDone() }
        case .overBudget:
            guard let loop = output?.eventLoop else { return }
            shared.bufferBudget.enforce(over: shared.services.registry, on: loop)
        case .end(let ending):
            end(ending)
        }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        guard let output else { return }
        output.reportUnread()
        guard !context.channel.isWritable else { return }
        // The client does not read: it must not make the daemon buffer without bound.
        end(.slowConsumer(maxOutputBytes: shared.limits.maxOutputBytes))
    }

    /// The daemon ends this connection: every close it decides comes here, and the
    /// state machine says whether it still can (once only) and with which words.
    func end(_ ending: ConnectionEnding) {
        guard let output else { return }
        // The daemon's own decision: the sessions end with the connection. A channel that
        // failed (the client reset it) is the client going, like its close: they wait for `resume`.
        if ending != .failed { endedByDaemon = true }
        let action = state.end(ending)
        switch ending {
        case .overBudget(let limit, let held) where action != .none:
            // The buffers of all clients together are past the budget and this connection is
            // the biggest of the owner holding the most: it is closed (its buffers are
            // freed), not the quiet ones. `total` is what all hold as it is dropped.
            shared.services.reporting.log.log(
                .notice, "dropping a client over the buffer budget", peer: principalKey,
                metadata: output.principal.logMetadata(pid: output.peer.pid, ["held": "\(held)", "total": "\(shared.bufferBudget.held)", "budget": "\(limit)"]))
        case .slowConsumer where action != .none:
            shared.services.reporting.log.log(.notice, "dropping a client that stopped reading", peer: principalKey, metadata: output.principal.logMetadata(pid: output.peer.pid, ["why": "\(ending.reason ?? "")"]))
        default: break
        }
        // A failed channel is counted when it goes inactive, as the client's doing.
        if action != .none, ending != .failed { shared.services.reporting.closed(ending) }
        switch action {
        case .sayBye(let reason): output.close(saying: .bye(reason: reason))
        case .close: output.channel.close(promise: nil)
        case .none: break
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        shared.logger.debug("connection error", metadata: ["error": "\(error)"])
        end(.failed)
    }

    /// The client closed its socket (a write to it failed): its pending requests are dropped.
    private func clientGone(_ output: ConnectionOutput) {
        guard state.writeFailed() == .dropInput else { return }
        output.setInputHeld(framer.bufferedBytes)
    }

    /// The holds whose session goes on.
    var liveHolds: [SessionHold] { holds.filter { !$0.hasEnded } }

    /// Closes a half-closed connection once its work is done (the state machine decides).
    private func closeIfDone() {
        // The per-read fast path: an open connection is never done.
        guard state.lifecycle == .draining, let output else { return }
        let busy = liveHolds.contains { $0.session.eventLoop === output.eventLoop && $0.session.hasPendingWork }
        // Closed once its last answers have left NIO's buffer: closing at once dropped those a
        // slow reader had not taken yet.
        if state.progressed(sessionsBusy: busy) == .close { output.closeWhenWritten() }
    }

    static func peerCredentials(of channel: Channel) -> PeerCredentials {
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
