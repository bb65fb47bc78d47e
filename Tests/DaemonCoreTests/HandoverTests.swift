import FormEngine
import NIOCore
import NIOEmbedded
import SignupProtocol
import Testing
@testable import SignupDaemonCore

/// Issue 16's handover without systemd: a connection and its session frozen in one daemon,
/// the state through its byte format, and restored in another, by the same code the
/// restart runs (`ConnectionHandler.handOver`, `HandoverCoordinator.state`, `carryOn`).
@Suite struct HandoverTests {
    private static let unsent = #"{"event":"pong","id":"unsent before the restart"}"# + "\n"

    /// A restart that did not carry a peer's connections leaves no more of its sessions
    /// waiting for `resume` than `--max-resumable-sessions-per-user`: the oldest end, as when
    /// connections drop in one process (helper-24: 294 waited for one user after a restart,
    /// and `status` counted 256 of them).
    @Test func aRestartKeepsNoMoreSessionsWaitingThanTheLimit() async throws {
        let new = try InProcessDaemon(tuned: { $0.maxResumableSessionsPerUser = 8 })
        let signup = try #require(new.services.forms.library.form(named: "signup"))
        var state = HandoverState()
        for index in 0..<12 {
            state.sessions.append(.init(
                id: String(format: "%016x", index), form: FormSession(form: signup, locale: "en"), seq: 1,
                ageNanoseconds: Int64(100 - index) * 1_000_000_000, owner: nil, views: [], uid: 1000, resume: "secret\(index)",
                detachedNanoseconds: 0))
        }
        await new.advance(by: .seconds(3600))
        var stages = TimedStages()
        _ = await HandoverCoordinator.carryOn(state, handlers: [:], outputs: [:], services: new.services, group: new.loop, stages: &stages)
        // The evicted ones end on their loop, after the restore.
        try await new.loop.submit {}.get()
        #expect(new.services.directory.detachedCount == 8)
        #expect(new.services.directory.count == 8)
        // The four oldest ended.
        let left = Set(new.services.directory.all.map(\.id))
        #expect(left == Set((4..<12).map { String(format: "%016x", $0) }))
        try await new.stop()
    }

    /// A session whose connection dropped before the restart (or was not carried) waits in
    /// the next process for the rest of its grace, secret and owner included (issue 23).
    @Test func aSessionWaitingForResumeWaitsInTheNextProcess() async throws {
        let old = try InProcessDaemon()
        let client = try await old.connect(uid: 1000)
        try await client.send(#"{"op":"open","form":"signup"}"#)
        let opened = try await client.next("opened").match
        let (session, secret) = (try #require(opened.string("session")), try #require(opened.string("resume")))
        try await client.send(#"{"op":"set","field":"password","value":"s3cret!"}"#)
        _ = try await client.sync()
        try await client.disconnect()
        await old.advance(by: .seconds(20))
        let services = old.services
        let state = try await old.loop.executeInContext { () -> HandoverState in
            let frozen = services.directory.all.map { session -> HandoverCoordinator.Frozen in
                let saved = session.freezeForHandover()
                return HandoverCoordinator.Frozen(
                    id: session.id, state: saved.state, seq: saved.seq, age: saved.age, owner: saved.owner, views: saved.views,
                    detachedFor: saved.detachedFor, principal: session.principal, resume: session.resumeSecret)
            }
            return HandoverCoordinator.state(frozen: frozen, connections: [], names: [:])
        }
        let record = try #require(state.sessions.first)
        #expect(record.owner == nil && record.uid == 1000 && record.resume == secret && record.detachedNanoseconds == TimeAmount.seconds(20).nanoseconds)
        let restored = try HandoverCodec.decode(try HandoverCodec.encode(state))
        try await old.stop()

        let new = try InProcessDaemon()
        // A machine's monotonic clock has run a while by any restart; the virtual one starts at 0.
        await new.advance(by: .seconds(3600))
        var stages = TimedStages()
        let carried = await HandoverCoordinator.carryOn(restored, handlers: [:], outputs: [:], services: new.services, group: new.loop, stages: &stages)
        #expect(carried.sessions == 1)
        // Another uid cannot have it; its owner can, with the secret, and the value is there.
        let stranger = try await new.connect(uid: 1001)
        try await stranger.send(#"{"op":"resume","session":"\#(session)","resume":"\#(secret)","id":1}"#)
        #expect(try await stranger.next().string("code") == "forbidden")
        // The grace goes on from where it was: 20 s had passed, 39 more leave it waiting.
        await new.advance(by: .seconds(39))
        let owner = try await new.connect(uid: 1000)
        try await owner.send(#"{"op":"sessions","id":2}"#)
        let listed = try #require(try await owner.next("sessions").match["sessions"]?.arrayValue?.first?.objectValue)
        #expect(listed["detachedSeconds"] == .number("59"))
        try await owner.send(#"{"op":"resume","session":"\#(session)","resume":"\#(secret)","id":3}"#)
        _ = try await owner.next("resumed")
        #expect(try await owner.sync().first { $0.string("field") == "password" }?.string("state") == "ok")
        try await new.stop()
    }

    @Test func aSessionWithAPartialLineAndUnsentOutputCarriesOnInANewDaemon() async throws {
        let old = try InProcessDaemon()
        let client = try await old.connect()
        try await client.send(#"{"op":"open","form":"signup"}"#)
        let session = try #require(try await client.next("opened").match.string("session"))
        try await client.send(#"{"op":"set","field":"password","value":"s3cret!"}"#)
        let seen = try await client.sync()
        let seenSeqs = seen.compactMap { $0["seq"]?.int64Value }
        let lastSeq = try #require(seenSeqs.max())
        // Half a request: the rest comes after the restart.
        try await client.sendRaw(#"{"op":"set","field":"repeatedPassword","value":"s3c"#)

        // The old daemon hands over: requests pause, the session freezes, the connection is saved and closed.
        let channel = client.channel
        let services = old.services
        let state = try await old.loop.executeInContext { () throws -> HandoverState in
            let handler = try channel.pipeline.syncOperations.handler(type: ConnectionHandler.self)
            handler.handover.name = "c.test.1"
            handler.pauseForHandover()
            let frozen = services.directory.all.map { session -> HandoverCoordinator.Frozen in
                let saved = session.freezeForHandover()
                return HandoverCoordinator.Frozen(
                    id: session.id, state: saved.state, seq: saved.seq, age: saved.age, owner: saved.owner, views: saved.views,
                    detachedFor: saved.detachedFor, principal: session.principal, resume: session.resumeSecret)
            }
            let output = try #require(handler.output)
            let record = try #require(handler.handOver())
            return HandoverCoordinator.state(frozen: frozen, connections: [record], names: [ObjectIdentifier(output): record.name])
        }
        #expect(!channel.isActive)
        #expect(state.sessions.map(\.id) == [session])
        let frozenSeq = try #require(state.sessions.first?.seq)
        #expect(frozenSeq >= UInt64(lastSeq))
        #expect(state.sessions.first?.form.phase == .editing)
        #expect(state.connections.first?.partial.bytes == Array(#"{"op":"set","field":"repeatedPassword","value":"s3c"#.utf8))
        #expect(state.connections.first?.sessions == [session])
        // Output the kernel had not taken (a testing channel takes everything at once).
        var handed = state
        handed.connections[0].unsent = HandoverBytes(Array(Self.unsent.utf8))
        let restored = try HandoverCodec.decode(try HandoverCodec.encode(handed))
        try await old.stop()

        // The next daemon adopts the connection, restores the session, and carries on.
        let new = try InProcessDaemon()
        let adopted = NIOAsyncTestingChannel(loop: new.loop)
        let context = new.context
        let record = restored.connections[0]
        try await new.loop.executeInContext {
            try adopted.pipeline.syncOperations.addHandler(UnsentOutputTracker())
            try adopted.pipeline.syncOperations.addHandler(ConnectionHandler(context: context, restoring: record))
        }
        try await adopted.connect(to: SocketAddress(unixDomainSocketPath: "/signupd-test.sock")).get()
        let (handler, output) = try await new.loop.executeInContext { () throws -> (NIOLoopBound<ConnectionHandler>, ConnectionOutput) in
            let handler = try adopted.pipeline.syncOperations.handler(type: ConnectionHandler.self)
            return (NIOLoopBound(handler, eventLoop: adopted.eventLoop), try #require(handler.output))
        }
        var stages = TimedStages()
        let carried = await HandoverCoordinator.carryOn(
            restored, handlers: [record.name: handler], outputs: [record.name: output], services: new.services, group: new.loop, stages: &stages)
        #expect(carried.sessions == 1 && carried.connections == 1)
        #expect(new.services.directory.count == 1)
        #expect(new.services.registry.connectionCount == 1)

        let resumed = TestClient(channel: adopted, loop: new.loop)
        // First the output the old daemon had not sent, and no second hello.
        let first = try await resumed.next()
        #expect(first.event == "pong" && first.string("id") == "unsent before the restart")
        // The rest of the half-sent line completes the request the old daemon started reading.
        try await resumed.sendRaw(#"ret!"}"# + "\n")
        let (validation, before) = try await resumed.next("validation")
        #expect(validation.string("field") == "repeatedPassword")
        #expect(validation.string("state") == "ok")
        #expect(validation.string("session") == session)
        // `seq` goes on from where the old daemon stopped, without a gap or a repeat.
        let seqs = (before + [validation]).compactMap { $0["seq"]?.int64Value }
        #expect(seqs == Array(Int64(frozenSeq) + 1 ... Int64(frozenSeq) + Int64(seqs.count)))
        // The values typed before the restart are there: the password matched the repeat.
        try await resumed.send(#"{"op":"snapshot"}"#)
        let snapshot = try await resumed.sync()
        let password = try #require(snapshot.first { $0.string("field") == "password" })
        #expect(password.string("state") == "ok")
        #expect(snapshot.allSatisfy { $0.event != "hello" && $0.event != "error" })
        try await new.stop()
    }

    /// A connection whose request waits for an answer from elsewhere (a token check against
    /// a stalled store) is saved once that answer has been sent, not before, by a look again
    /// in the answer's own callback as the coordinator does (helper-23: completing the waiters
    /// inside the hooks' mutation aborted the old process with an exclusivity violation); one
    /// whose answer does not come within a second is not saved (a restart closes it).
    @Test func aConnectionAwaitingAnAnswerIsSavedOnceItCame() async throws {
        let store = StalledStore()
        let daemon = try InProcessDaemon(store: .custom(store))
        let token = String(repeating: "A", count: LoginTokens.encodedLength)
        /// Sends a token check the store holds, then starts the connection's handover: once
        /// the answer came (or a second passed), it is saved if it can be.
        func verifyThenHandOver(_ client: TestClient, name: String) async throws -> EventLoopFuture<HandoverState.ConnectionRecord?> {
            try await client.send(#"{"op":"verify","token":"\#(token)","id":7}"#)
            let channel = client.channel
            return try await daemon.loop.executeInContext { () throws -> EventLoopFuture<HandoverState.ConnectionRecord?> in
                let handler = try channel.pipeline.syncOperations.handler(type: ConnectionHandler.self)
                handler.handover.name = name
                handler.pauseForHandover()
                #expect(handler.handOver() == nil, "the answer is still awaited")
                // What `HandoverCoordinator.attempt` does: read the hooks, then save.
                return handler.whenReplied(within: .seconds(1)).assumeIsolated().map { handler.handover.name == nil ? nil : handler.handOver() }.nonisolated()
            }
        }

        let answered = try await daemon.connect()
        let saved = try await verifyThenHandOver(answered, name: "c.test.1")
        store.gate.signal()  // the check is answered
        #expect(try await saved.get()?.name == "c.test.1")
        let answer = try await answered.next()
        #expect(answer.string("code") == "invalid_token" && answer["id"] == .number("7"))

        let unanswered = try await daemon.connect()
        let timedOut = try await verifyThenHandOver(unanswered, name: "c.test.2")
        await daemon.advance(by: .seconds(1))
        #expect(try await timedOut.get() == nil)
        store.gate.signal()
        try await daemon.stop()
    }

    @Test func theTrackerKnowsWhichBytesAreStillUnsent() throws {
        let channel = EmbeddedChannel()
        let tracker = UnsentOutputTracker()
        try channel.pipeline.syncOperations.addHandler(tracker)
        _ = channel.write(ByteBuffer(string: "first\n"))
        _ = channel.write(ByteBuffer(string: "second\n"))
        // NIO holds 10 bytes: the tail of what was written, in order.
        #expect(tracker.unsent(buffered: 10) == Array("st\nsecond\n".utf8))
        #expect(tracker.unsent(buffered: 13) == Array("first\nsecond\n".utf8))
        #expect(tracker.unsent(buffered: 0).isEmpty)
        channel.flush()
        // Written out: nothing is left to pass on.
        #expect(tracker.unsent(buffered: 13).isEmpty)
        _ = try channel.finish()
    }
}
