import FormEngine
import NIOCore
import NIOPosix
import SignupProtocol

#if canImport(Glibc)
import Glibc
#endif

extension HandoverCoordinator {
    /// What a start found in the store.
    enum Restored: Equatable {
        /// Nothing was stored: a first start, or after `systemctl stop`.
        case nothing
        /// Sessions and connections carried on, and how many connections handed over had
        /// been closed by their clients during the restart (systemd drops a stored
        /// descriptor that hangs up; helper-37: "handed over connections=4", then "carried on
        /// connections=0", with nothing said of the four).
        case carried(sessions: Int, connections: Int, endedByClients: Int)
        /// Stored connections that could not be carried on were closed with `bye`.
        case closed(connections: Int, reason: String)
    }

    /// In a new process, before READY=1: takes what the previous one left in the store.
    /// Connections it saved carry on with their sessions; any other stored connection (after
    /// a crash, or with a state that cannot be read) gets `bye` and is closed. `stages` gets
    /// how long each step took.
    func restore(context: ConnectionHandler.Context, group: EventLoopGroup, stages: inout TimedStages) async -> Restored {
        let stored = takeInherited()
        for (name, fd) in stored.unknown {
            DescriptorStore.remove(name)
            close(fd)
        }
        guard stored.state != nil || !stored.connections.isEmpty else { return .nothing }
        DescriptorStore.extendTimeout(by: .seconds(60))
        var state: HandoverState?
        var reason = "restarted"
        if let fd = stored.state {
            do throws(HandoverStateError) {
                let bytes = try DescriptorStore.readSealed(fd)
                stages.finished("read")
                state = try HandoverCodec.decode(bytes)
                stages.finished("decode")
            } catch {
                reason = "restarted: the previous process's state could not be read (\(error.reason))"
                context.logger.error("handover state not used: connections are closed", metadata: ["reason": "\(error.reason)"])
            }
            DescriptorStore.remove(DescriptorStore.stateName)
            close(fd)
        }
        let records = Dictionary((state?.connections ?? []).map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        var closedCount = 0
        var adopting: [(record: HandoverState.ConnectionRecord, future: EventLoopFuture<Channel>)] = []
        var farewells: [EventLoopFuture<Channel>] = []
        for (name, fd) in stored.connections {
            guard let record = records[name] else {
                DescriptorStore.remove(name)
                farewells.append(Self.farewell(context: context, group: group, reason: reason).withConnectedSocket(fd))
                closedCount += 1
                continue
            }
            adopting.append((record, Self.bootstrap(context: context, group: group, record: record).withConnectedSocket(fd)))
        }
        for farewell in farewells {
            if let channel = try? await farewell.get() { try? await channel.closeFuture.get() }
        }
        guard let state else { return .closed(connections: closedCount, reason: reason) }

        // Every adoption at once, then each loop's connections in one task on it (a hop
        // per connection, awaited in turn, was 75-100 ms of a 625-connection restart).
        var adopted: [(record: HandoverState.ConnectionRecord, channel: Channel)] = []
        let results = try? await EventLoopFuture.whenAllComplete(adopting.map(\.future), on: group.next()).get()
        for ((record, _), result) in zip(adopting, results ?? []) {
            guard case .success(let channel) = result else {
                DescriptorStore.remove(record.name)
                continue
            }
            adopted.append((record, channel))
        }
        let found = await onTheirLoops(adopted, loop: \.channel.eventLoop) { item -> (name: String, output: ConnectionOutput, handler: NIOLoopBound<ConnectionHandler>)? in
            let channel = item.channel
            guard let handler = try? channel.pipeline.syncOperations.handler(type: ConnectionHandler.self), let output = handler.output,
                  handler.handover.restoring != nil, channel.isActive else { return nil }
            return (item.record.name, output, NIOLoopBound(handler, eventLoop: channel.eventLoop))
        }
        var outputs: [String: ConnectionOutput] = [:]
        var handlers: [String: NIOLoopBound<ConnectionHandler>] = [:]
        for case let (name, output, handler)? in found {
            outputs[name] = output
            handlers[name] = handler
        }
        stages.finished("connections")
        let carried = await Self.carryOn(state, handlers: handlers, outputs: outputs, services: context.services, group: group, stages: &stages)
        return .carried(sessions: carried.sessions, connections: carried.connections, endedByClients: max(0, state.connections.count - outputs.count))
    }

    /// The sessions of `state`, on the connections adopted for it (by name; a connection
    /// missing here drops the sessions it owned), then the connections' waiting requests.
    /// Returns how many sessions and connections carry on.
    static func carryOn(
        _ state: HandoverState, handlers: [String: NIOLoopBound<ConnectionHandler>], outputs: [String: ConnectionOutput], services: SessionServices,
        group: EventLoopGroup, stages: inout TimedStages
    ) async -> (sessions: Int, connections: Int) {
        // A session whose owning connection is not here waits for `resume` (if the record
        // says who owns it and resuming is on); else it ends, as before.
        let keepDetached = services.resumeGrace.map { $0 > .zero } ?? false
        // Oldest first: each owner's index list is in opening order, so sessions added in that
        // order are appended; in the state's order (a dictionary's), each was inserted into
        // the middle of its owner's list, shifting the rest.
        let oldestFirst = state.sessions.sorted { $0.ageNanoseconds > $1.ageNanoseconds }
        let owned = oldestFirst.compactMap { record -> (record: HandoverState.SessionRecord, owner: ConnectionOutput?, principal: Principal, views: [ConnectionOutput], loop: EventLoop)? in
            let owner = record.owner.flatMap { outputs[$0] }
            let views = record.views.compactMap { outputs[$0] }
            guard let uid = record.uid ?? owner?.peer.uid else { return nil }
            if owner == nil, !keepDetached || record.uid == nil { return nil }
            let principal = Principal(uid: uid, client: record.client, address: record.address.flatMap(ClientAddress.init))
            return (record, owner, principal, views, owner?.eventLoop ?? group.next())
        }
        let restored = await onTheirLoops(owned, loop: \.loop) { item in
            let detachedFor: TimeAmount? = item.owner == nil ? .nanoseconds(max(0, item.record.detachedNanoseconds ?? 0)) : nil
            let session = Session(
                restoring: item.record.id, state: item.record.form, seq: item.record.seq, age: .nanoseconds(max(0, item.record.ageNanoseconds)),
                principal: item.principal, resumeSecret: item.record.resume, owner: item.owner, detachedFor: detachedFor, views: item.views,
                eventLoop: item.loop, services: services)
            services.directory.restore(session)
            // Each connection's hold, keyed by connection name, for its list below.
            let holds = ((item.owner == nil ? [] : [item.record.owner].compactMap { $0 }) + item.record.views).compactMap { name in
                outputs[name].flatMap { session.hold(of: $0) }.map { (name, $0) }
            }
            return (session: session, holds: Dictionary(holds, uniquingKeysWith: { first, _ in first }))
        }
        let sessions = Dictionary(restored.map { ($0.session.id, $0.holds) }, uniquingKeysWith: { first, _ in first })
        stages.finished("sessions")
        // The sessions carry on first (checks that were in flight run again), then the
        // connections handle the requests that waited, and read again.
        _ = await onTheirLoops(restored.map(\.session), loop: \.eventLoop) { $0.resumeAfterHandover() }
        stages.finished("checks")
        let resuming = state.connections.compactMap { record in
            handlers[record.name].flatMap { handler in
                outputs[record.name].map { (handler: handler, output: $0, held: record.sessions.compactMap { sessions[$0]?[record.name] }) }
            }
        }
        _ = await onTheirLoops(resuming, loop: \.output.eventLoop) { $0.handler.value.resumeAfterHandover(holds: $0.held) }
        stages.finished("requests")
        return (sessions.count, handlers.count)
    }

    /// A stored connection that cannot carry on (a crash, an unreadable state): it is
    /// adopted only to be closed with `bye` saying why, like every close the daemon decides.
    private static func farewell(context: ConnectionHandler.Context, group: EventLoopGroup, reason: String) -> ClientBootstrap {
        let clock = context.services.clock
        return ClientBootstrap(group: group)
            .channelOption(.autoRead, value: false)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(FarewellHandler(reason: reason, clock: clock))
                }
            }
    }

    /// The same channel set-up as accepted connections (SignupServer); the connection's
    /// state machine holds reading back until the sessions are back.
    private static func bootstrap(context: ConnectionHandler.Context, group: EventLoopGroup, record: HandoverState.ConnectionRecord) -> ClientBootstrap {
        let outputCap = context.limits.maxOutputBytes
        return ClientBootstrap(group: group)
            .channelOption(.allowRemoteHalfClosure, value: true)
            .channelOption(.writeBufferWaterMark, value: .init(low: outputCap / 2, high: outputCap))
            .channelOption(.recvAllocator, value: ConnectionHandler.recvAllocator)
            .channelOption(.maxMessagesPerRead, value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(UnsentOutputTracker())
                    try channel.pipeline.syncOperations.addHandler(ConnectionHandler(context: context, restoring: record))
                }
            }
    }
}

/// Says `bye` with `reason` to a connection as soon as it is active, and closes it.
private final class FarewellHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    let reason: String
    let clock: DaemonClock

    init(reason: String, clock: DaemonClock) {
        self.reason = reason
        self.clock = clock
    }

    func channelActive(context: ChannelHandlerContext) {
        ConnectionOutput(channel: context.channel, clock: clock).close(saying: .bye(reason: reason))
    }
}
