/// A connection's life as a plain value: `ConnectionHandler` tells it what happened and
/// performs the action it returns, so the lifecycle is stated in one place and tested
/// without a channel (`ConnectionLifecycleTests`).
///
///     connecting ──admitted/adopted──▶ open ──input closed──▶ draining ──work done──▶ closing
///          └──refused──▶ refused          open/draining ──the daemon ends it──▶ closing
///                                                 (any) ──inactive──▶ closed
struct ConnectionLifecycle {
    enum State: Equatable {
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

    private(set) var state = State.connecting

    enum AdmissionAction: Equatable {
        /// Greet and start the idle timer.
        case greet
        /// Send the refusal and `bye`, then close.
        case refuse(RequestFailure)
    }

    /// The registry's answer for this new connection.
    mutating func admission(
        _ answer: ConnectionRegistry.Admission, uid: UInt32, maxConnections: Int, maxConnectionsPerUID: Int, connectsPerUIDPerSecond: Int?
    ) -> AdmissionAction {
        precondition(state == .connecting, "admission twice")
        switch answer {
        case .admitted, .admittedDisplacing:
            state = .open
            return .greet
        case .tooManyConnections:
            state = .refused
            return .refuse(.tooManyConnections(limit: maxConnections))
        case .tooManyForUser:
            state = .refused
            return .refuse(.tooManyConnectionsForUser(uid: uid, limit: maxConnectionsPerUID))
        case .connectingTooFast:
            state = .refused
            return .refuse(.connectingTooFast(uid: uid, perSecond: connectsPerUIDPerSecond ?? 0))
        case .draining:
            state = .refused
            return .refuse(.draining)
        }
    }

    /// A connection carried over from the previous process (issue 16, Handover/): it was
    /// admitted there, so it is open here without asking the limits again. If its client had
    /// half-closed, the socket says so again and `inputClosed` follows.
    mutating func adopted() {
        precondition(state == .connecting, "adopted after admission")
        state = .open
    }

    /// Whether request bytes are taken: only from an admitted client that may still send.
    var readsRequests: Bool { state == .open }

    /// Whether the connection counts in the registry (and must leave it when inactive).
    private var registered: Bool { state == .open || state == .draining || state == .closing }

    enum InputClosedAction: Equatable {
        /// Frame the unterminated last line, answer what is buffered, then check for done.
        case finishInput
        case none
    }

    /// The client half-closed its side.
    mutating func inputClosed() -> InputClosedAction {
        guard state == .open else { return .none }
        state = .draining
        return .finishInput
    }

    /// The state of the connection's work, when it may have finished.
    struct Work {
        var requestsBuffered: Bool
        var awaitingReply: Bool
        /// A session of this connection waits for a check or a submit.
        var sessionsBusy: Bool
    }

    enum WorkAction: Equatable {
        case close
        case none
    }

    /// After any progress: a draining connection with nothing left to do closes.
    mutating func progressed(_ work: Work) -> WorkAction {
        guard state == .draining, !work.requestsBuffered, !work.awaitingReply, !work.sessionsBusy else { return .none }
        state = .closing
        return .close
    }

    /// Why the daemon itself ends a connection. `reason` is what its `bye` says: every
    /// such text is here.
    enum Ending: Equatable {
        /// No request and no session for `--idle-connection-timeout`.
        case idle(seconds: Int64)
        /// None of its answers read for that long.
        case stuck(seconds: Int64)
        /// The buffers of all clients passed the budget and this one held the most.
        case overBudget(limit: Int, held: Int)
        /// More unread output than `--max-output-bytes`.
        case slowConsumer(maxOutputBytes: Int)
        /// The server was full and its uid held the most: another uid needed the room.
        case displaced(maxConnections: Int, uid: UInt32, held: Int)
        /// The daemon stops.
        case shutdown(String)
        /// The channel failed: nothing can be said.
        case failed

        var reason: String? {
            switch self {
            case .idle(let seconds): "idle: no request for \(seconds) seconds"
            case .stuck(let seconds): "stuck: none of the answers read for \(seconds) seconds"
            case .overBudget(let limit, let held):
                "over budget: the buffers of all clients passed \(limit) bytes and this connection held \(held) of them"
            case .slowConsumer(let maxOutputBytes): "slow consumer: more than \(maxOutputBytes) bytes unread"
            case .displaced(let maxConnections, let uid, let held):
                "displaced: the server's \(maxConnections) connections are taken and uid \(uid) holds the most (\(held)); another user needed one"
            case .shutdown(let reason): reason
            case .failed: nil
            }
        }
    }

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
    mutating func end(_ ending: Ending) -> EndAction {
        switch state {
        case .open, .draining:
            state = .closing
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
        guard state == .open || state == .draining else { return .none }
        state = .closing
        return .dropInput
    }

    enum InactiveAction: Equatable {
        /// Unsubscribe from sessions, give back the output budget, leave the registry.
        case release(deregister: Bool)
    }

    /// The channel went inactive.
    mutating func inactive() -> InactiveAction {
        let action = InactiveAction.release(deregister: registered)
        state = .closed
        return action
    }
}
