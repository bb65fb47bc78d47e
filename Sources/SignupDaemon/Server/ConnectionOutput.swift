import NIOCore
import SignupProtocol
import Synchronization

/// The sending side of one client connection, usable from any thread, and the one path
/// every byte to the client takes. Events produced while the connection's requests are
/// handled are batched (`batch`) and flushed together; events from elsewhere (check
/// answers, signup results, sessions on another event loop) are flushed at once.
///
/// Mutable state is confined to `eventLoop`; that is what makes it `@unchecked Sendable`.
/// Every event-loop-only method checks it with `preconditionInEventLoop` (release builds
/// too), and so does every access to its hooks and settings (`@LoopConfined`).
final class ConnectionOutput: EventLoopConfined, @unchecked Sendable {
    let channel: Channel
    let eventLoop: EventLoop
    /// The peer's credentials (SO_PEERCRED), fixed at connect.
    let peer: PeerCredentials
    /// Whom the connection speaks for: the peer's uid, and the client a trusted front end
    /// named (once, before its first session). Readable from any thread.
    var principal: Principal { named.withLock { $0 } }
    private let named: Mutex<Principal>

    private var writer = JSONWriter(reservingCapacity: 512)
    private var pending: ByteBuffer
    /// True while `flush` hands a batch to NIO. A read arriving then is NIO draining the
    /// socket after the write failed (the client has gone): see `ConnectionHandler.channelRead`.
    var flushing: Bool {
        eventLoop.preconditionInEventLoop()
        return isFlushing
    }
    private var isFlushing = false
    /// The last flushed write; writes complete in order, so when it has, nothing is left in NIO's buffer.
    private var lastWrite: EventLoopFuture<Void>?
    /// Flushed writes not completed yet. At none (a Unix socket's usual case: the write
    /// completes inside `flush`) nothing is in NIO's buffer, and `bufferedBytes` does not
    /// ask NIO: its option lookup (dynamic casts, generic metadata) was 2-3 % of the
    /// daemon's CPU under 100 clients, asked two or three times per request (issue 29).
    private var writesInFlight = 0
    /// True inside `batch`: deliveries wait for its end to be flushed together.
    private var inBatch = false
    /// NIO's buffered output as read first inside the current batch: it changes only when
    /// this connection flushes or the loop writes to the socket on a later tick, so a batch
    /// handling several lines asks NIO once, not before every line.
    private var batchBuffered: Int?
    /// Whether the handler hears of every delivery from outside a read batch
    /// (`ConnectionOutputEvent.delivered`: a half-closed connection closes once its work is done).
    @LoopConfined var reportsDeliveries = false

    /// The daemon-wide buffer budget (request bytes not handled yet plus unread output),
    /// and what this connection last reported to it.
    @LoopConfined var bufferBudget: BufferBudget? = nil
    private var inputHeld = 0
    private var reported = 0
    private let published = Atomic<Int>(0)
    private var resample: Scheduled<Void>?

    /// Since when the client has read none of the output pending for it (nil: none is
    /// pending, or it read some since the last sample). Event loop only.
    var outputStuckSince: NIODeadline? {
        eventLoop.preconditionInEventLoop()
        return stuckSince
    }
    private var stuckSince: NIODeadline?
    private var lastUnread = 0

    /// What this connection holds (as last reported), readable from any thread.
    var heldBytes: Int { published.load(ordering: .relaxed) }

    /// The daemon's clock (for `outputStuckSince`).
    private let clock: DaemonClock

    /// Where refusals are counted and logged (nil in tests that make outputs by hand).
    let reporting: Reporting?

    init(channel: Channel, peer: PeerCredentials = .unknown, clock: DaemonClock = .system, reporting: Reporting? = nil) {
        self.channel = channel
        self.reporting = reporting
        self.peer = peer
        named = Mutex(Principal(uid: peer.uid))
        self.clock = clock
        eventLoop = channel.eventLoop
        pending = channel.allocator.buffer(capacity: 0)
    }

    /// A trusted front end named the client this connection speaks for (`client` op).
    func speak(for principal: Principal) {
        named.withLock { $0 = principal }
    }

    /// Runs `body` with deliveries batched: they are flushed together when the outermost
    /// batch ends, not one by one (the answers to one read's requests). Event loop only.
    func batch<T>(_ body: () throws -> T) rethrows -> T {
        eventLoop.preconditionInEventLoop()
        let outer = inBatch
        inBatch = true
        defer {
            inBatch = outer
            if !outer {
                batchBuffered = nil
                flush()
            }
        }
        return try body()
    }

    /// Sends an event from any thread.
    func deliver(_ event: ServerEvent) {
        if eventLoop.inEventLoop {
            enqueue(event)
            if !inBatch {
                flush()
                if reportsDeliveries { tell(.delivered) }
            }
        } else {
            post(.event(event, then: nil))
        }
    }

    /// Sends `event` from any thread, then runs `after` on this connection's loop: what
    /// `after` changes is seen by this connection's requests only once `event` has gone.
    func deliver(_ event: ServerEvent, then after: @escaping @Sendable () -> Void) {
        if eventLoop.inEventLoop {
            deliver(event)
            after()
        } else {
            post(.event(event, then: after))
        }
    }

    /// Says, from any thread, that the awaited answer is complete. From another loop it
    /// is queued behind the earlier `deliver`s to this connection, so it runs after them.
    func replyComplete() {
        if eventLoop.inEventLoop {
            tell(.replyComplete)
        } else {
            post(.replyComplete)
        }
    }

    /// Runs `body` on this connection's loop: at once there, else in order with the
    /// deliveries other threads queued for it before.
    func perform(_ body: @escaping @Sendable () -> Void) {
        if eventLoop.inEventLoop { body() } else { post(.run(body)) }
    }

    /// What other threads send this connection, in the order they sent it.
    private enum Posted: Sendable {
        case event(ServerEvent, then: (@Sendable () -> Void)?)
        case run(@Sendable () -> Void)
        case replyComplete
    }
    /// Posted and not yet handled; whether a task or a turn to handle them is pending; and
    /// whether the connection was told to end for falling too far behind.
    private let inbox = Mutex<(items: [Posted], queued: Bool, dropped: Bool)>(([], false, false))
    /// Items a connection may have posted and not handled; past it, it is ended as one over
    /// the buffer budget (a view that cannot keep up with its session's fan-out).
    static let maxPosted = 16_384
    /// This loop's shares (set when the connection is active): what other threads post is
    /// handled within its uid's share, like its requests. Nil: at once.
    @LoopConfined var turns: FairTurns? = nil

    /// One task on the loop for whatever other threads post before it runs, not one per
    /// event: a session on another loop with views everywhere made a task per event per
    /// view, and NIO runs every queued task before it polls again, so one uid's fan-out kept
    /// a loop from everyone's input for seconds (issue 27's fresh eyes). Handled as a batch:
    /// one write for all of it.
    private func post(_ item: Posted) {
        let (first, behind) = inbox.withLock { inbox in
            inbox.items.append(item)
            defer { inbox.queued = true }
            let behind = inbox.items.count > Self.maxPosted && !inbox.dropped
            if behind { inbox.dropped = true }
            return (!inbox.queued, behind)
        }
        if first { eventLoop.execute { self.handlePosted() } }
        if behind { dropForBudget() }
    }

    /// Handles what was posted, within the uid's share of this loop (`FairTurns`): the rest
    /// waits for its next turn, with a poll before it. One uid's fan-out to views on this
    /// loop is then its share's worth of work, not everyone's wait (issue 27's fresh eyes).
    /// `all`: everything at once, whatever the share (the handover saves what is sent).
    func handlePosted(all: Bool = false) {
        eventLoop.preconditionInEventLoop()
        let items = inbox.withLock { inbox in
            defer { inbox.items = [] }
            return inbox.items
        }
        let share = all ? nil : turns?.share(of: principal.key, upTo: items.count)
        var handled = 0
        var delivered = false
        batch {
            while handled < items.count, share?.allows(handled) ?? true {
                switch items[handled] {
                case .event(let event, let after):
                    enqueue(event)
                    delivered = true
                    after?()
                case .run(let body): body()
                case .replyComplete: tell(.replyComplete)
                }
                handled += 1
            }
        }
        if let share, let turns { turns.spend(share, lines: handled) }
        if delivered, reportsDeliveries { tell(.delivered) }
        let waiting = inbox.withLock { inbox in
            inbox.items = Array(items[handled...]) + inbox.items
            if inbox.items.isEmpty { inbox.queued = false }
            return !inbox.items.isEmpty
        }
        guard waiting else { return }
        if handled < items.count, let turns {
            turns.waitForTurn(ObjectIdentifier(self), peer: principal.key) { [self] in handlePosted() }
        } else {
            eventLoop.execute { self.handlePosted() }
        }
    }

    /// Sends `event` now, whatever the batch, and closes the connection: the last words
    /// (`bye`) of a close the daemon decided. Event loop only.
    func close(saying event: ServerEvent) {
        eventLoop.preconditionInEventLoop()
        enqueue(event)
        flush()
        channel.close(promise: nil)
    }

    /// Bytes a previous process encoded for this client and had not sent (a handover, issue
    /// 16): they go first, by the same path as every reply. Event loop only.
    func resend(_ bytes: [UInt8]) {
        eventLoop.preconditionInEventLoop()
        guard !bytes.isEmpty else { return }
        if pending.capacity == 0 { pending = channel.allocator.buffer(capacity: bytes.count) }
        pending.writeBytes(bytes)
        flush()
    }

    /// Encodes an event into the pending batch. Event loop only: everything else sends
    /// with `deliver` (batched inside a read, at once outside) or `close(saying:)`.
    private func enqueue(_ event: ServerEvent) {
        eventLoop.preconditionInEventLoop()
        writer.reset()
        event.encode(into: &writer)
        if pending.capacity == 0 { pending = channel.allocator.buffer(capacity: 256) }
        writer.withBytes { _ = pending.writeBytes($0) }
        // One big answer does not keep its storage for the connection's life: helper-27's
        // 900 connections that each got one 60 KB answer pinned 65 MB that no budget counted.
        if writer.capacity > Self.keptEncoderBytes { writer = JSONWriter(reservingCapacity: 512) }
    }

    /// The encoding storage a connection keeps between answers; a bigger answer's is freed.
    static let keptEncoderBytes = 4096
    /// The output storage a connection keeps between flushes (a keystroke's answers fit).
    static let keptPendingBytes = 512

    /// The encoding storage kept now (for tests).
    var encoderCapacity: Int {
        eventLoop.preconditionInEventLoop()
        return writer.capacity
    }

    /// Writes and flushes the pending batch. Event loop only.
    func flush() {
        eventLoop.preconditionInEventLoop()
        guard pending.readableBytes > 0 else { return }
        let promise = eventLoop.makePromise(of: Void.self)
        writesInFlight += 1
        promise.futureResult.assumeIsolated().whenComplete { [self] _ in writesInFlight -= 1 }
        isFlushing = true
        channel.writeAndFlush(pending, promise: promise)
        isFlushing = false
        // Written at once (a Unix socket's usual case), NIO keeps no reference and the next
        // answers reuse this storage: a new buffer per flush was an allocation per request.
        // Still held (the client is slow), `clear` copies on the next write. A big batch's
        // storage is not kept for the connection's life.
        if pending.capacity > Self.keptPendingBytes {
            pending = channel.allocator.buffer(capacity: 0)
        } else {
            pending.clear()
        }
        batchBuffered = nil
        lastWrite = promise.futureResult
        reportUnread()
    }

    /// Output encoded or written but not yet taken by the kernel. Event loop only.
    var unreadBytes: Int {
        pending.readableBytes + bufferedBytes
    }

    /// Output written to NIO and not yet taken by the kernel (none once the channel is gone). Event loop only.
    var bufferedBytes: Int {
        eventLoop.preconditionInEventLoop()
        guard writesInFlight > 0 else { return 0 }
        if inBatch, let batchBuffered { return batchBuffered }
        let buffered = channel.isActive ? ((try? channel.syncOptions?.getOption(.bufferedWritableBytes)) ?? 0) : 0
        if inBatch { batchBuffered = buffered }
        return buffered
    }

    /// Flushes, then calls `body` on this loop once everything written so far has left
    /// NIO's buffer (or failed: the connection closed). Event loop only.
    func whenWritten(_ body: @escaping () -> Void) {
        eventLoop.preconditionInEventLoop()
        flush()
        guard let lastWrite else { return body() }
        lastWrite.assumeIsolated().whenComplete { _ in body() }
    }

    /// Closes the connection once everything written so far has left NIO's buffer: a
    /// half-closed connection whose work is done keeps its last answers. Event loop only.
    func closeWhenWritten() {
        whenWritten { [channel] in channel.close(promise: nil) }
    }

    /// Request bytes read but not handled yet (a partial line, lines waiting). Event loop only.
    func setInputHeld(_ bytes: Int) {
        eventLoop.preconditionInEventLoop()
        guard bytes != inputHeld else { return }
        inputHeld = bytes
        reportUnread()
    }

    /// Tells the budget what this connection holds: its unhandled input and the output the
    /// client has not read; while output is pending, again a second later (a client that
    /// reads it gives it back). Event loop only.
    func reportUnread() {
        eventLoop.preconditionInEventLoop()
        guard let bufferBudget else { return }
        let unread = bufferedBytes
        // Progress is output shrinking; the clock is read only while output is pending.
        if unread == 0 {
            stuckSince = nil
        } else if stuckSince == nil || unread < lastUnread {
            stuckSince = clock.now()
        }
        lastUnread = unread
        let held = inputHeld + unread
        let total = bufferBudget.add(held - reported)
        if held != reported { published.store(held, ordering: .relaxed) }
        reported = held
        if unread > 0, resample == nil {
            resample = eventLoop.scheduleTask(in: .seconds(1)) { [self] in
                resample = nil
                reportUnread()
            }
        }
        if total > bufferBudget.limit { tell(.overBudget) }
    }

    /// Asks, from any thread, that the daemon end this connection (displaced to make room
    /// for a uid holding fewer, the shutdown): its handler's lifecycle decides
    /// (`ConnectionStateMachine.end`) and says `bye`.
    func end(_ ending: ConnectionEnding) {
        if eventLoop.inEventLoop {
            tell(.end(ending))
        } else {
            eventLoop.execute { self.tell(.end(ending)) }
        }
    }

    /// Asks, from any thread, that this connection be dropped for the buffer budget: it
    /// holds the most.
    func dropForBudget() {
        if eventLoop.inEventLoop {
            tell(.end(.overBudget(limit: bufferBudget?.limit ?? 0, held: heldBytes)))
        } else {
            eventLoop.execute { self.dropForBudget() }
        }
    }

    /// Tells the connection's handler, through the pipeline: the output never calls into
    /// the handler, and once the channel is closed nobody is told. Event loop only.
    private func tell(_ event: ConnectionOutputEvent) {
        channel.pipeline.syncOperations.fireUserInboundEventTriggered(event)
    }

    /// Gives this connection's share back (it closed). Event loop only.
    func releaseBudget() {
        eventLoop.preconditionInEventLoop()
        resample?.cancel()
        resample = nil
        _ = bufferBudget?.add(-reported)
        reported = 0
        inputHeld = 0
        published.store(0, ordering: .relaxed)
    }
}

/// What a connection's output tells its handler (`ConnectionHandler.userInboundEventTriggered`).
enum ConnectionOutputEvent: Sendable {
    /// The answer the connection awaited has been delivered (`ConnectionStateMachine.replied`).
    case replyComplete
    /// An event went out from outside a read batch (only while `reportsDeliveries`).
    case delivered
    /// The buffers of all clients together passed the budget: drop the biggest.
    case overBudget
    /// The daemon ends the connection.
    case end(ConnectionEnding)
}

/// Who is on the other end of a Unix socket.
struct PeerCredentials: Sendable, Equatable {
    var pid: Int32
    var uid: UInt32
    var gid: UInt32

    static let unknown = PeerCredentials(pid: 0, uid: UInt32.max, gid: UInt32.max)
}
