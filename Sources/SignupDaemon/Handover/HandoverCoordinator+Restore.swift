import FormEngine
import NIOCore
import NIOPosix
import Protocol

#if canImport(Glibc)
import Glibc
#endif

extension HandoverCoordinator {
    /// What a start found in the store.
    enum Restored: Equatable {
        /// Nothing was stored: a first start, or after `systemctl stop`.
        case nothing
        /// Sessions and connections carried on.
        case carried(sessions: Int, connections: Int)
        /// Stored connections that could not be carried on were closed with `bye`.
        case closed(connections: Int, reason: String)
    }

    /// In a new process, before READY=1: takes what the previous one left in the store.
    /// Connections it saved carry on with their sessions; any other stored connection (after
    /// a crash, or with a state that cannot be read) gets `bye` and is closed.
    func restore(context: ConnectionHandler.Context, group: EventLoopGroup) async -> Restored {
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
                state = try HandoverCodec.decode(try DescriptorStore.readSealed(fd))
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
        for (name, fd) in stored.connections {
            guard let record = records[name] else {
                Self.sayGoodbye(fd: fd, name: name, reason: reason)
                closedCount += 1
                continue
            }
            adopting.append((record, Self.bootstrap(context: context, group: group, record: record).withConnectedSocket(fd)))
        }
        guard let state else { return .closed(connections: closedCount, reason: reason) }

        var outputs: [String: ConnectionOutput] = [:]
        var handlers: [String: NIOLoopBound<ConnectionHandler>] = [:]
        for (record, future) in adopting {
            guard let channel = try? await future.get() else {
                DescriptorStore.remove(record.name)
                continue
            }
            let found = try? await channel.eventLoop.submit { () -> (ConnectionOutput, NIOLoopBound<ConnectionHandler>)? in
                guard let handler = try? channel.pipeline.syncOperations.handler(type: ConnectionHandler.self), let output = handler.output,
                      handler.handover.restoring != nil, channel.isActive else { return nil }
                return (output, NIOLoopBound(handler, eventLoop: channel.eventLoop))
            }.get()
            guard let (output, handler) = found ?? nil else { continue }
            outputs[record.name] = output
            handlers[record.name] = handler
        }

        var sessions: [String: Session] = [:]
        for record in state.sessions {
            guard let owner = outputs[record.owner] else { continue }
            let views = record.views.compactMap { outputs[$0] }
            let services = context.services
            let session = try? await owner.eventLoop.submit {
                Session(restoring: record.id, state: record.form, seq: record.seq, owner: owner, views: views, services: services)
            }.get()
            if let session {
                services.directory.restore(session)
                sessions[record.id] = session
            }
        }
        // The sessions carry on first (checks that were in flight run again), then the
        // connections handle the requests that waited, and read again.
        for session in sessions.values {
            try? await session.eventLoop.submit { session.resumeAfterHandover() }.get()
        }
        for record in state.connections {
            guard let handler = handlers[record.name], let output = outputs[record.name] else { continue }
            let held = record.sessions.compactMap { sessions[$0] }
            try? await output.eventLoop.submit { handler.value.resumeAfterHandover(sessions: held) }.get()
        }
        return .carried(sessions: sessions.count, connections: handlers.count)
    }

    /// A stored connection that cannot carry on: `bye` with the reason, then out of the store.
    private static func sayGoodbye(fd: Int32, name: String, reason: String) {
        var writer = JSONWriter(reservingCapacity: 96)
        ServerEvent.bye(reason: reason).encode(into: &writer)
        DescriptorStore.sendWithoutWaiting(writer.bytes, to: fd)
        DescriptorStore.remove(name)
        close(fd)
    }

    /// The same channel set-up as accepted connections (SignupServer), reading off until
    /// the sessions are back.
    private static func bootstrap(context: ConnectionHandler.Context, group: EventLoopGroup, record: HandoverState.ConnectionRecord) -> ClientBootstrap {
        let outputCap = context.limits.maxOutputBytes
        return ClientBootstrap(group: group)
            .channelOption(.allowRemoteHalfClosure, value: true)
            .channelOption(.writeBufferWaterMark, value: .init(low: outputCap / 2, high: outputCap))
            .channelOption(.recvAllocator, value: FixedSizeRecvByteBufferAllocator(capacity: ConnectionHandler.readBytes))
            .channelOption(.maxMessagesPerRead, value: 1)
            .channelOption(.autoRead, value: false)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(UnsentOutputTracker())
                    try channel.pipeline.syncOperations.addHandler(ConnectionHandler(context: context, restoring: record))
                }
            }
    }
}
