import FormEngine
import NIOCore
import SignupProtocol

/// A connection's part in a handover (issue 16).
struct HandoverHooks {
    /// The record the previous process left, for a connection adopted from the store.
    var restoring: HandoverState.ConnectionRecord?
    /// Its `FDNAME=` in the file descriptor store, once stored.
    var name: String?
    /// When this connection last told the coordinator it is in use (`touchForHandover`).
    var lastTouched: NIODeadline?
    /// Saved and closed for the next process: its stored descriptor stays in the store.
    var handedOver = false
    /// The handover waiting for an answer this connection awaits from elsewhere.
    var replyWaiters: [EventLoopPromise<Void>] = []

    /// The awaited answer came, or the connection is gone: the handover may look again.
    /// Returns the waiters for the caller to complete once this mutation has ended: their
    /// callbacks read these hooks (`HandoverCoordinator.attempt`), and completed in here
    /// they made an exclusivity violation that aborted the old process in a restart under a
    /// views attack (helper-23; views waiting their turn for a session on another loop made
    /// a connection awaiting its answer at the handover common).
    mutating func takeReplyWaiters() -> [EventLoopPromise<Void>] {
        defer { replyWaiters.removeAll() }
        return replyWaiters
    }
}

extension ConnectionHandler {
    /// A connection carried over from another process: restores its input, and sends first
    /// the output the previous process had not sent. Requests wait for `resumeAfterHandover`.
    convenience init(context: Context, restoring record: HandoverState.ConnectionRecord) {
        self.init(context: context)
        handover.restoring = record
        handover.name = record.name
        framer = LineFramer(maxLineBytes: context.limits.maxLineBytes, partial: record.partial.bytes, discarding: record.discarding)
        state.adopted(
            pending: record.lines.map { line in
                switch line {
                case .line(let bytes): .line(bytes.bytes)
                case .tooLong: .tooLong
                }
            })
    }

    /// From `channelActive`, for an adopted connection.
    func restoreHandedOver(context: ChannelHandlerContext, output: ConnectionOutput) {
        guard let record = handover.restoring else { return }
        shared.handover?.register(output: output, name: record.name, handler: self)
        output.resend(record.unsent.bytes)
    }

    /// When the connection first holds a session (open, attach): into the file descriptor
    /// store, if its uid's `CarryBudget` allows. Until then there is nothing to carry.
    func storeForHandover(output: ConnectionOutput) {
        guard let coordinator = shared.handover, handover.name == nil, handover.restoring == nil else { return }
        handover.name = coordinator.store(channel: output.channel, output: output, handler: self)
    }

    /// At a restart, on the connection's loop: carried (stored before, or now within its
    /// user's budget: `HandoverCoordinator.storeAtRestart`), gone already, or to be closed.
    func storeAtRestart(output: ConnectionOutput, descriptors: [UInt64: Int32]) -> HandoverCoordinator.RestartOutcome {
        guard let coordinator = shared.handover, output.channel.isActive else { return .gone }
        guard handover.name == nil, handover.restoring == nil else { return .carried }
        switch coordinator.storeAtRestart(channel: output.channel, output: output, handler: self, descriptors: descriptors) {
        case .stored(let name):
            handover.name = name
            return .carried
        case let refused:
            return .closed(refused, heldSessions: !liveHolds.isEmpty)
        }
    }

    /// From `channelRead`: a stored connection in use keeps its place ahead of idle ones
    /// (`CarryDisplacement`); the coordinator hears of it every few seconds at most.
    func touchForHandover(output: ConnectionOutput, now: NIODeadline) {
        guard handover.name != nil, let coordinator = shared.handover else { return }
        if let last = handover.lastTouched, now - last < .seconds(5) { return }
        handover.lastTouched = now
        coordinator.touch(output: output)
    }

    /// From `channelInactive`: false when the connection was handed over (its stored
    /// descriptor stays in the store and the sessions stay as they were saved).
    func forgetForHandover(_ output: ConnectionOutput) -> Bool {
        if let coordinator = shared.handover {
            coordinator.closed(output: output, name: handover.name, handedOver: handover.handedOver)
        }
        return !handover.handedOver
    }

    /// Stops handling requests and reading: what the client sends from now on waits in
    /// the socket for the next process.
    func pauseForHandover() {
        state.pause()
    }

    /// Completes once no answer from elsewhere is awaited (at once if none is), or after
    /// `limit` if it has still not come.
    func whenReplied(within limit: TimeAmount) -> EventLoopFuture<Void> {
        guard let output else { preconditionFailure("a stored connection has its output") }
        guard state.awaitingReply, output.channel.isActive else { return output.eventLoop.makeSucceededVoidFuture() }
        let promise = output.eventLoop.makePromise(of: Void.self)
        handover.replyWaiters.append(promise)
        let timer = output.eventLoop.scheduleTask(in: limit) { promise.succeed() }
        promise.futureResult.whenComplete { _ in timer.cancel() }
        return promise.futureResult
    }

    /// Saves the connection for the next process and closes this process's descriptor
    /// (the client does not notice: systemd holds another). Nil while an answer from
    /// elsewhere is still awaited (ask again).
    func handOver() -> HandoverState.ConnectionRecord? {
        guard state.handOver() == .save, let output, let name = handover.name else { return nil }
        output.flush()
        let buffered = output.bufferedBytes
        let tracker = try? output.channel.pipeline.syncOperations.handler(type: UnsentOutputTracker.self)
        let unsent = tracker?.unsent(buffered: buffered) ?? []
        let lines: [HandoverState.PendingLine] = state.pending.map { frame in
            switch frame {
            case .line(let bytes): .line(HandoverBytes(bytes))
            case .tooLong: .tooLong
            }
        }
        let record = HandoverState.ConnectionRecord(
            name: name, sessions: liveHolds.map(\.session.id), lines: lines,
            partial: framer.partial, discarding: framer.discarding, unsent: unsent,
            client: output.principal.client, address: output.principal.address?.text, uid: output.principal.uid
        )
        handover.handedOver = true
        output.channel.close(promise: nil)
        return record
    }

    /// The sessions are back: requests are handled again, first those that waited.
    func resumeAfterHandover(holds restored: [SessionHold]) {
        holds = restored
        if state.resume() == .drain { drain() }
    }
}
