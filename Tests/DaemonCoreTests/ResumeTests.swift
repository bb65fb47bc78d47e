import SignupProtocol
import Synchronization
import Testing
import UsernameIdentity
@testable import SignupDaemonCore

/// A dropped connection's session waits `--resume-grace` for `resume` with its secret
/// (issue 23), on the daemon's virtual clock.
@Suite struct ResumeTests {
    /// Opens the signup form on a new connection and types into it; returns the connection,
    /// the session, its secret and the last `seq` seen.
    private func typedForm(_ daemon: InProcessDaemon, uid: UInt32 = 1000) async throws -> (TestClient, String, String, Int64) {
        let client = try await daemon.connect(uid: uid)
        try await client.send(#"{"op":"open","form":"signup","id":"o"}"#)
        let opened = try await client.next("opened").match
        let session = try #require(opened.string("session"))
        let secret = try #require(opened.string("resume"))
        try await client.send(#"{"op":"set","field":"username","value":"carol"}"#)
        try await client.send(#"{"op":"set","field":"password","value":"tr0ub4dor&3x"}"#)
        let seen = try await client.sync()
        let seqs = seen.compactMap { $0["seq"]?.int64Value }
        let lastSeq = try #require(seqs.max())
        return (client, session, secret, lastSeq)
    }

    @Test func resumeWithinTheGraceKeepsEveryValueAndSeq() async throws {
        let daemon = try InProcessDaemon()
        let (first, session, secret, lastSeq) = try await typedForm(daemon)
        #expect(secret.count == 32)
        try await first.disconnect()
        await daemon.advance(by: .seconds(59))

        let second = try await daemon.connect()
        try await second.send(#"{"op":"sessions","id":1}"#)
        let listed = try #require(try await second.next("sessions").match["sessions"]?.arrayValue?.first?.objectValue)
        #expect(listed["detachedSeconds"] == .number("59"))
        try await second.send(#"{"op":"resume","session":"\#(session)","resume":"\#(String(repeating: "0", count: 32))","id":2}"#)
        #expect(try ServerEvent.decode(try await second.next()) == .error(code: .forbidden, message: "wrong resume secret for session \(session)", session: session, id: .integer(2)))
        try await second.send(#"{"op":"resume","session":"\#(session)","resume":"\#(secret)","id":3}"#)
        let (resumed, before) = try await second.next("resumed")
        #expect(before.isEmpty && resumed.string("session") == session && resumed["id"] == .number("3"))
        let snapshot = try await second.sync()
        // `seq` goes on: past anything the first connection saw (an answer that arrived
        // while nobody held the session consumed its number), one by one.
        let seqs = snapshot.compactMap { $0["seq"]?.int64Value }
        let firstSeq = try #require(seqs.first)
        #expect(firstSeq > lastSeq && seqs == Array(firstSeq ..< firstSeq + Int64(seqs.count)))
        let password = try #require(snapshot.first { $0.string("field") == "password" })
        #expect(password.string("state") == "ok")
        // The values are there: typing the repeat completes the form.
        try await second.send(#"{"op":"set","field":"repeatedPassword","value":"tr0ub4dor&3x"}"#)
        let repeated = try await second.next("validation").match
        #expect(repeated.string("state") == "ok" && repeated["seq"]?.int64Value == seqs.last.map { $0 + 1 })
        // Resumed, the session no longer waits: the grace's end passes it by.
        await daemon.advance(by: .seconds(5))
        try await second.send(#"{"op":"snapshot"}"#)
        #expect(try await second.sync().allSatisfy { $0.event != "closed" && $0.event != "error" })
        try await daemon.stop()
    }

    @Test func afterTheGraceResumeSaysWhyNot() async throws {
        let daemon = try InProcessDaemon()
        let (first, session, secret, _) = try await typedForm(daemon)
        try await first.disconnect()
        await daemon.advance(by: .seconds(60))
        let second = try await daemon.connect()
        try await second.send(#"{"op":"resume","session":"\#(session)","resume":"\#(secret)","id":1}"#)
        #expect(try ServerEvent.decode(try await second.next()) == .error(
            code: .unknownSession, message: "session \(session) has ended (abandoned: its connection dropped and nobody resumed it within 60 seconds)",
            session: session, id: .integer(1)))
        // Another uid learns nothing of it.
        let stranger = try await daemon.connect(uid: 1001)
        try await stranger.send(#"{"op":"resume","session":"\#(session)","resume":"\#(secret)","id":2}"#)
        #expect(try await stranger.next().string("message") == "no session \(session)")
        try await daemon.stop()
    }

    @Test func anotherUIDCannotResumeAndAnExplicitCloseEndsAtOnce() async throws {
        let daemon = try InProcessDaemon()
        let (first, session, secret, _) = try await typedForm(daemon)
        try await first.disconnect()
        let stranger = try await daemon.connect(uid: 1001)
        try await stranger.send(#"{"op":"resume","session":"\#(session)","resume":"\#(secret)","id":1}"#)
        #expect(try await stranger.next().string("code") == "forbidden")

        let (closing, closed, closedSecret, _) = try await typedForm(daemon)
        try await closing.send(#"{"op":"close"}"#)
        _ = try await closing.next("closed")
        let other = try await daemon.connect()
        try await other.send(#"{"op":"resume","session":"\#(closed)","resume":"\#(closedSecret)","id":2}"#)
        #expect(try await other.next().string("code") == "unknown_session")
        try await daemon.stop()
    }

    /// A user that opens forms and drops its connections again and again keeps only so many
    /// waiting: the oldest ends, saying why.
    @Test func theSessionsWaitingForResumeAreBoundedPerUser() async throws {
        let daemon = try InProcessDaemon { $0.maxResumableSessionsPerUser = 2 }
        var dropped: [(String, String)] = []
        for _ in 0..<3 {
            let (client, session, secret, _) = try await typedForm(daemon)
            try await client.disconnect()
            dropped.append((session, secret))
        }
        #expect(daemon.services.directory.count == 2)
        let next = try await daemon.connect()
        try await next.send(#"{"op":"resume","session":"\#(dropped[0].0)","resume":"\#(dropped[0].1)","id":1}"#)
        #expect(try await next.next().string("message") == "session \(dropped[0].0) has ended (abandoned: more than 2 sessions of this user were waiting to be resumed)")
        try await next.send(#"{"op":"resume","session":"\#(dropped[2].0)","resume":"\#(dropped[2].1)","id":2}"#)
        #expect(try await next.next("resumed").match.string("session") == dropped[2].0)
        // Another user's drops are counted apart.
        let (other, _, _, _) = try await typedForm(daemon, uid: 1001)
        try await other.disconnect()
        #expect(daemon.services.directory.count == 3)
        try await daemon.stop()
    }

    /// A reload while the old connection still looks alive: the new one takes the session,
    /// the old one is told.
    @Test func resumingALiveSessionMovesIt() async throws {
        let daemon = try InProcessDaemon()
        let (first, session, secret, _) = try await typedForm(daemon)
        let second = try await daemon.connect()
        try await second.send(#"{"op":"resume","session":"\#(session)","resume":"\#(secret)","id":1}"#)
        _ = try await second.next("resumed")
        let told = try await first.next("closed").match
        #expect(told.string("reason") == "resumed by another connection")
        try await first.send(#"{"op":"set","session":"\#(session)","field":"username","value":"dave","id":2}"#)
        let refused = try await first.next()
        #expect(refused.string("code") == "unknown_session", "\(refused)")
        try await second.send(#"{"op":"set","field":"username","value":"dave"}"#)
        #expect(try await second.next("validation").match.string("field") == "username")
        try await daemon.stop()
    }

    /// A login that finishes while nobody holds its session: `resume` hands over its result, token included.
    @Test func aResultThatArrivedWhileDetachedIsDeliveredOnResume() async throws {
        let daemon = try InProcessDaemon()
        let owner = try await daemon.connect()
        _ = try await owner.signUp("erin", "correct horse battery")
        let client = try await daemon.connect()
        try await client.send(#"{"op":"open","form":"login"}"#)
        let opened = try await client.next("opened").match
        let (session, secret) = (try #require(opened.string("session")), try #require(opened.string("resume")))
        try await client.send(#"{"op":"set","field":"username","value":"erin"}"#)
        try await client.send(#"{"op":"set","field":"password","value":"correct horse battery"}"#)
        try await client.send(#"{"op":"submit"}"#)
        try await client.disconnect()
        // The login runs on the hash threads; resume until its result is there.
        let second = try await daemon.connect()
        try await second.send(#"{"op":"resume","session":"\#(session)","resume":"\#(secret)"}"#)
        var result: JSONObject?
        while result == nil {
            let event = try await second.next()
            if event.event == "result" { result = event }
        }
        #expect(result?.string("messageId") == "login.done" && result?.string("token") != nil)
        try await daemon.stop()
    }

    /// A login whose connection is gone is not run once the daemon stops: nobody waits for
    /// it, and the drain must not wait for it either (a connected one's is waited for:
    /// `DrainAndStoreTests.theDrainWaitsForSubmitsAtMostTheGracePeriod`).
    @Test(.timeLimit(.minutes(1))) func aDetachedSessionsSubmitIsNotRunOnceTheDaemonStops() async throws {
        try PasswordHasher.initialise()
        let store = StalledAccountStore(hash: try PasswordHasher(cost: .init(operations: 1, memoryBytes: 8192)).hash("secret words"))
        let daemon = try InProcessDaemon(store: .custom(store))
        let client = try await daemon.connect()
        try await client.send(#"{"op":"open","form":"login"}"#)
        try await client.send(#"{"op":"set","field":"username","value":"frank"}"#)
        try await client.send(#"{"op":"set","field":"password","value":"secret words"}"#)
        try await client.send(#"{"op":"submit"}"#)
        #expect(try await client.sync().contains { $0.event == "busy" && $0["value"] == .bool(true) })
        try await client.disconnect()
        #expect(daemon.services.directory.count == 1)  // detached, waiting for resume

        let drain = ShutdownDrain(registry: daemon.services.registry, grace: .seconds(20)).begin(on: daemon.loop)
        store.gate.signal()  // the account is found; the hash job finds nobody waiting
        await drain.finishWork()
        // Had the password been checked, the login would have stored a token.
        #expect(store.tokensStored == 0)
        try await daemon.stop()
    }
}

/// A store whose account lookup waits for the gate, then finds frank with `hash`; it counts
/// the tokens a successful login stores.
final class StalledAccountStore: StubStore {
    let gate = AsyncGate()
    let hash: String
    private let stored = Mutex(0)
    var tokensStored: Int { stored.withLock { $0 } }

    init(hash: String) { self.hash = hash }

    func account(for identity: UsernameIdentity) async throws(AccountStoreError) -> StoredAccount? {
        await gate.wait()
        return StoredAccount(id: 1, username: "frank", passwordHash: hash)
    }

    func storeToken(hash: [UInt8], accountID: Int64, expiresAt: Int64) async throws(AccountStoreError) {
        stored.withLock { $0 += 1 }
    }
}
