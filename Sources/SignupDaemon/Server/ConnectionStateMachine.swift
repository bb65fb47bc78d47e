/// One connection's whole pipeline as a plain value: whether it is admitted, the request
/// lines read and not yet handled, the answer it waits for, the turn or the output room it
/// waits for, a read held back, a pause for a handover, the half-close. `ConnectionHandler`
/// tells it what happened and performs the action it returns (`let action = state.x();
/// run(action)`); nothing else decides. Tested without a channel (`ConnectionStateMachineTests`).
///
///     connecting ──admitted/adopted──▶ open ──input closed──▶ draining ──work done──▶ closing
///          └──refused──▶ refused          open/draining ──the daemon ends it──▶ closing
///                                                 (any) ──inactive──▶ closed
///
/// While open, the pipeline: lines are handled in order while no answer is awaited; a
/// full turn waits for the next (`FairTurns`), unread output for the client to read; while
/// any of that is pending, and while paused for a handover, reads are held back (NIO's
/// `read` is not passed on, as `HTTPServerPipelineHandler` does), so a client that
/// pipelines and never reads is not read either.
struct ConnectionStateMachine {
    enum Lifecycle: Equatable {
        /// Before the registry answered.
        case connecting
        /// Turned away at the door: it never counted in the registry.
        case refused
        /// Admitted, reading requests.
        case open
        /// The client sent all it will; pending work finishes, then the connection closes.
        case draining
        /// The close has been asked for.
        case closing
        /// The channel is gone.
        case closed
    }

    /// A request line read from the client, or the place of one that was too long.
    enum Frame: Equatable {
        case line([UInt8])
        case tooLong
    }

    /// What a pending drain waits for; it handles the backlog when it comes.
    enum Wake: Equatable {
        /// The loop's next turn (`FairTurns`).
        case turn
        /// The client to read its answers.
        case output
    }

    private(set) var lifecycle = Lifecycle.connecting
    /// Lines read and not handled yet, in order (`backlogHead` is the next).
    private var backlog: [Frame] = []
    private var backlogHead = 0
    /// Bytes of the lines in the backlog (for the buffer budget).
    private(set) var backlogBytes = 0
    /// A request's answer comes from elsewhere (a token check, a session on another loop):
    /// later requests wait, so that answers leave in request order and `ping` is a barrier.
    private(set) var awaitingReply = false
    /// The wake-up a drain waits for; nil: none is scheduled.
    private(set) var wake: Wake?
    /// NIO asked to read while reading was held back: passed on once it may read again.
    private(set) var readHeld = false
    /// Paused for a handover: nothing is handled, nothing read; the rest goes to the next process.
    private(set) var paused = false

    init() {}

    // MARK: - Admission

    enum AdmissionAction: Equatable {
        /// Greet and start the idle timer.
        case greet
        /// Send the refusal and `bye`, then close.
        case refuse(RequestFailure)
    }

    /// The registry's answer for this new connection.
    mutating func admission(
        _ answer: ConnectionRegistry.Admission, uid: UInt32, maxConnections: Int, maxConnectionsPerUID: Int, connectsPerUIDPerSecond: Int?,
        bridge: Bool = false
    ) -> AdmissionAction {
        precondition(lifecycle == .connecting, "admission twice")
        let failure: RequestFailure
        switch answer {
        case .admitted, .admittedDisplacing:
            lifecycle = .open
            return .greet
        case .tooManyConnections: failure = .tooManyConnections(limit: maxConnections)
        case .tooManyForUser where bridge: failure = .tooManyConnectionsForBridge(uid: uid, limit: maxConnectionsPerUID)
        case .tooManyForUser: failure = .tooManyConnectionsForUser(uid: uid, limit: maxConnectionsPerUID)
        case .connectingTooFast: failure = .connectingTooFast(uid: uid, perSecond: connectsPerUIDPerSecond ?? 0)
        case .draining: failure = .draining
        }
        lifecycle = .refused
        return .refuse(failure)
    }

    /// A connection carried over from the previous process (issue 16): admitted there, so
    /// open here without asking the limits again, paused until its sessions are back
    /// (`resume`), with the lines it had not handled. If its client had half-closed, the
    /// socket says so again and `inputClosed` follows.
    mutating func adopted(pending: [Frame]) {
        precondition(lifecycle == .connecting, "adopted after admission")
        lifecycle = .open
        paused = true
        for frame in pending { append(frame) }
    }

    /// Whether request bytes are taken: only from an admitted client that may still send.
    var readsRequests: Bool { lifecycle == .open }

    /// Whether the connection counts in the registry (and must leave it when inactive).
    private var registered: Bool { lifecycle == .open || lifecycle == .draining || lifecycle == .closing }

    /// Lines waiting to be handled.
    var hasBacklog: Bool { backlogHead < backlog.count }

    /// The lines not handled yet (what a handover carries).
    var pending: ArraySlice<Frame> { backlog[backlogHead...] }

    // MARK: - Reading

    enum ReadAction: Equatable {
        /// Pass NIO's `read` on.
        case read
        /// Hold it back until the backlog is handled (remembered: `readHeld`).
        case hold
    }

    /// NIO asks to read from the socket.
    mutating func readRequested() -> ReadAction {
        guard mayRead else {
            readHeld = true
            return .hold
        }
        readHeld = false
        return .read
    }

    /// Reading goes on while nothing is waiting to be handled, and while the connection
    /// waits for its turn with less than `readAheadBytes` waiting.
    private var mayRead: Bool {
        guard lifecycle == .open, !paused, !awaitingReply else { return false }
        if !hasBacklog, wake == nil { return true }
        return wake == .turn && backlogBytes < Self.readAheadBytes
    }

    /// What a connection waiting for its turn may have waiting and still be read. Holding
    /// the read takes the socket out of NIO's poll and putting it back puts it in again (an
    /// `epoll_ctl` each): with one uid's 1,000 connections each keeping one request in
    /// flight, most waited for a turn, and that was 1.2 `epoll_ctl` calls a request and a
    /// tenth of the daemon's CPU (issue 29). A client that pipelines still stops being read
    /// once this much waits (then at most one read more: `ConnectionHandler.readBytes`).
    static let readAheadBytes = 1024

    enum LinesAction: Equatable {
        /// Handle them now.
        case drain
        /// A drain is due already (a wake-up, an answer, the end of a pause): they wait for it.
        case wait
        /// Not taken: the connection does not read requests (refused, draining, closing).
        case ignore
    }

    /// A line framed from what was read (ignored unless the connection reads requests).
    mutating func received(_ frame: Frame) {
        guard lifecycle == .open else { return }
        append(frame)
    }

    /// The lines of one read are in: whether to handle them now.
    mutating func receivedAll() -> LinesAction {
        guard lifecycle == .open else { return .ignore }
        return wake == nil && !paused && !awaitingReply ? .drain : .wait
    }

    private mutating func append(_ frame: Frame) {
        backlog.append(frame)
        if case .line(let bytes) = frame { backlogBytes += bytes.count }
    }

    // MARK: - Handling the backlog

    /// Whether a drain may handle lines now: not while paused, nor while a wake-up is
    /// pending (that drain comes), nor once the connection is closing.
    var mayDrain: Bool {
        !paused && wake == nil && (lifecycle == .open || lifecycle == .draining)
    }

    /// Whether a line can be handled now (`nextFrame` would return one): checked before the
    /// caller's own limits, the output room being costly to ask for.
    var canHandleNext: Bool { mayDrain && !awaitingReply && hasBacklog }

    /// The next line to handle, in order, unless an answer is awaited or the caller's
    /// limits (its turn's share, output room) say stop.
    mutating func nextFrame() -> Frame? {
        guard canHandleNext else { return nil }
        let frame = backlog[backlogHead]
        backlogHead += 1
        if case .line(let bytes) = frame { backlogBytes -= bytes.count }
        if backlogHead == backlog.count {
            // A few lines' room is kept: a request a read is the usual case, and freeing it
            // made every request allocate it again. A burst's larger backlog is given back.
            backlog.removeAll(keepingCapacity: backlog.capacity <= Self.keptBacklogCapacity)
            backlogHead = 0
        }
        return frame
    }

    /// The backlog room kept once it is handled (lines, not bytes).
    static let keptBacklogCapacity = 4

    /// The line being handled gets its answer from elsewhere: the rest waits for `replied`.
    mutating func awaitReply() {
        awaitingReply = true
    }

    enum DrainEndAction: Equatable {
        /// Nothing to do until something happens (an answer, a read).
        case none
        /// Pass on the read held back: the backlog is handled.
        case read
        /// Lines wait for the client to read its answers: resume when it has.
        case waitForOutput
        /// Lines wait for the loop's next turn.
        case waitForTurn
        /// A draining connection's lines are all handled: close once its sessions are idle (`progressed`).
        case checkDone
    }

    /// A drain stopped: because the backlog is handled, an answer is awaited, the turn's
    /// share is spent, or the client has `outputFull` (asked only when lines are left).
    mutating func drainEnded(outputFull: @autoclosure () -> Bool) -> DrainEndAction {
        guard mayDrain else { return .none }
        if awaitingReply { return .none }
        if hasBacklog {
            let full = outputFull()
            wake = full ? .output : .turn
            return full ? .waitForOutput : .waitForTurn
        }
        if lifecycle == .draining { return .checkDone }
        guard readHeld, mayRead else { return .none }
        readHeld = false
        return .read
    }

    /// The wake-up a drain waited for came.
    mutating func woke() -> LinesAction {
        guard wake != nil else { return .ignore }
        wake = nil
        return mayDrain ? .drain : .ignore
    }

    /// The awaited answer has been delivered.
    mutating func replied() -> LinesAction {
        guard awaitingReply else { return .ignore }
        awaitingReply = false
        return mayDrain ? .drain : .ignore
    }

    // MARK: - Half-close

    enum InputClosedAction: Equatable {
        /// Take the unterminated last line (`finishedLine`), answer what is buffered, then check for done.
        case finishInput
        case none
    }

    /// The client half-closed its side.
    mutating func inputClosed() -> InputClosedAction {
        guard lifecycle == .open else { return .none }
        lifecycle = .draining
        readHeld = false
        return .finishInput
    }

    /// The client's unterminated last line, after `inputClosed`.
    mutating func finishedLine(_ frame: Frame) {
        guard lifecycle == .draining else { return }
        append(frame)
    }

    enum WorkAction: Equatable {
        case close
        case none
    }

    /// After any progress: a draining connection with nothing left to do closes.
    mutating func progressed(sessionsBusy: Bool) -> WorkAction {
        guard lifecycle == .draining, !hasBacklog, !awaitingReply, wake == nil, !sessionsBusy else { return .none }
        lifecycle = .closing
        return .close
    }

    // MARK: - Ending

    enum EndAction: Equatable {
        /// Say `bye` with this reason, then close; no further request is handled.
        case sayBye(String)
        /// Close without a word.
        case close
        /// It is ending already.
        case none
    }

    /// The daemon ends the connection. Only once: a connection already closing (its `bye`
    /// said, or its client gone) is left alone. A failed channel is closed in any state.
    mutating func end(_ ending: ConnectionEnding) -> EndAction {
        switch lifecycle {
        case .open, .draining:
            lifecycle = .closing
            return ending.reason.map(EndAction.sayBye) ?? .close
        case .connecting, .refused, .closing:
            return ending == .failed ? .close : .none
        case .closed:
            return .none
        }
    }

    enum WriteFailedAction: Equatable {
        /// Drop every request buffered or still arriving: nobody will read the answers.
        case dropInput
        case none
    }

    /// Writing to the client failed: it closed its socket. NIO then hands over everything
    /// the client had sent before it went (a flooder leaves hundreds of kilobytes in the
    /// socket); none of it is handled, so a client that leaves costs nothing more.
    mutating func writeFailed() -> WriteFailedAction {
        guard lifecycle == .open || lifecycle == .draining else { return .none }
        lifecycle = .closing
        dropBacklog()
        return .dropInput
    }

    enum InactiveAction: Equatable {
        /// Unsubscribe from sessions, give back the output budget, leave the registry.
        case release(deregister: Bool)
    }

    /// The channel went inactive.
    mutating func inactive() -> InactiveAction {
        let action = InactiveAction.release(deregister: registered)
        lifecycle = .closed
        dropBacklog()
        awaitingReply = false
        wake = nil
        readHeld = false
        return action
    }

    private mutating func dropBacklog() {
        backlog.removeAll()
        backlogHead = 0
        backlogBytes = 0
    }

    // MARK: - Handover (issue 16)

    /// Stops handling requests and reading: what the client sends from now on waits in
    /// the socket for the next process.
    mutating func pause() {
        paused = true
    }

    enum HandOverAction: Equatable {
        /// Save the pending lines and close this process's descriptor.
        case save
        /// An answer from elsewhere is still awaited: ask again.
        case notYet
    }

    /// The handover asks to carry the connection to the next process (it stays paused).
    mutating func handOver() -> HandOverAction {
        paused = true
        return awaitingReply ? .notYet : .save
    }

    /// The sessions are back: requests are handled again, first those that waited.
    mutating func resume() -> LinesAction {
        guard paused else { return .ignore }
        paused = false
        return mayDrain ? .drain : .ignore
    }
}
