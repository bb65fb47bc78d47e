import SignupProtocol
import Testing
@testable import SignupDaemonCore

/// A trusted front end speaks for its people (issue 23): one bridge uid, many clients, and
/// every limit follows the client, not the uid.
@Suite struct FrontEndTests {
    static let bridge: UInt32 = 33

    /// A connection of the bridge uid speaking for `client` (from `address`, if given).
    private func connect(_ daemon: InProcessDaemon, client: String, address: String? = nil) async throws -> TestClient {
        let connection = try await daemon.connect(uid: Self.bridge)
        let member = address.map { #","address":"\#($0)""# } ?? ""
        try await connection.send(#"{"op":"client","client":"\#(client)"\#(member),"id":"c"}"#)
        let reply = try await connection.next()
        #expect(reply.event == "client" && reply.string("client") == client, "client \(client): \(reply)")
        return connection
    }

    /// Opens the login form on `connection` with `password` for `user`; returns the submit's messageId.
    private func login(_ connection: TestClient, _ user: String, _ password: String) async throws -> String? {
        try await connection.send(#"{"op":"open","form":"login"}"#)
        try await connection.send(#"{"op":"set","field":"username","value":"\#(user)"}"#)
        try await connection.send(#"{"op":"set","field":"password","value":"\#(password)"}"#)
        try await connection.send(#"{"op":"submit"}"#)
        let result = try await connection.next("result").match
        try await connection.send(#"{"op":"close"}"#)
        _ = try await connection.next("closed")
        return result.string("messageId")
    }

    /// The username's next answer (`ok` or `failed`) on `connection`.
    private func usernameAnswer(_ connection: TestClient) async throws -> String? {
        while true {
            let event = try await connection.next("validation").match
            if event.string("field") == "username", let state = event.string("state"), state == "ok" || state == "failed" { return state }
        }
    }

    @Test func onlyATrustedPeerMayNameAClientAndOnlyOnceBeforeItsFirstSession() async throws {
        let daemon = try InProcessDaemon(trustedBridgeUIDs: [Self.bridge])
        let stranger = try await daemon.connect(uid: 1000)
        try await stranger.send(#"{"op":"client","client":"x","id":1}"#)
        let refused = try ServerEvent.decode(try await stranger.next())
        #expect(refused == .error(code: .forbidden, message: "uid 1000 is not a trusted front end (see --trusted-bridge-group)", session: nil, id: .integer(1)))

        let bridge = try await daemon.connect(uid: Self.bridge)
        try await bridge.send(#"{"op":"client","client":"browser-1","address":"::ffff:203.0.113.7","id":2}"#)
        #expect(try ServerEvent.decode(try await bridge.next()) == .clientNamed(client: "browser-1", address: "203.0.113.7", id: .integer(2)))
        try await bridge.send(#"{"op":"client","client":"browser-2","id":3}"#)
        #expect(try ServerEvent.decode(try await bridge.next()) == .error(code: .clientFixed, message: #"this connection already speaks for client "browser-1""#, session: nil, id: .integer(3)))

        let late = try await daemon.connect(uid: Self.bridge)
        try await late.send(#"{"op":"open","form":"login"}"#)
        _ = try await late.sync()
        try await late.send(#"{"op":"client","client":"browser-3","id":4}"#)
        #expect(try ServerEvent.decode(try await late.next()) == .error(code: .clientFixed, message: "name the client before this connection's first open or attach", session: nil, id: .integer(4)))

        let sloppy = try await daemon.connect(uid: Self.bridge)
        try await sloppy.send(#"{"op":"client","client":"browser-4","address":"203.0.113.300","id":5}"#)
        #expect(try ServerEvent.decode(try await sloppy.next()) == .error(code: .invalidRequest, message: #""address" must be an IPv4 or IPv6 address, not "203.0.113.300""#, session: nil, id: .integer(5)))
        try await sloppy.send(#"{"op":"client","client":"\#(String(repeating: "x", count: 257))","id":6}"#)
        #expect(try await sloppy.next().string("code") == "invalid_request")
        try await daemon.stop()
    }

    /// The issue's scenario: client A fails 20 logins for alice; client B's correct login
    /// succeeds at once. A holds its whole connection share; B still connects. A looks up
    /// names as fast as it can; B's availability answers are not slowed.
    /// (A check kept waiting would hang the wait for B's answer: the time limit makes that a failure.)
    @Test(.timeLimit(.minutes(1))) func oneClientsGuessingAndFloodingLeaveAnotherUntouched() async throws {
        let daemon = try InProcessDaemon(trustedBridgeUIDs: [Self.bridge], maxConnectionsPerClient: 3) { tuning in
            tuning.availabilityChecksPerUIDPerSecond = 1
        }
        let owner = try await daemon.connect(uid: 1000)
        #expect(try await owner.signUp("alice", "correct horse battery").string("messageId") == "signup.done")

        let a = try await connect(daemon, client: "A", address: "198.51.100.1")
        var answers: [String?] = []
        for _ in 1...20 { answers.append(try await login(a, "alice", "wrong horse")) }
        #expect(answers.prefix(5).allSatisfy { $0 == "username.invalid_credentials" })
        #expect(answers.dropFirst(5).allSatisfy { $0 == "login.rate_limited" })
        let b = try await connect(daemon, client: "B", address: "198.51.100.2")
        #expect(try await login(b, "alice", "correct horse battery") == "login.done")

        // A takes its whole share of connections: the next one is refused, B's is not.
        _ = try await connect(daemon, client: "A", address: "198.51.100.1")
        _ = try await connect(daemon, client: "A", address: "198.51.100.1")
        let fourth = try await daemon.connect(uid: Self.bridge)
        try await fourth.send(#"{"op":"client","client":"A","address":"198.51.100.1","id":9}"#)
        let refusal = try await fourth.next()
        #expect(refusal.string("code") == "limit_exceeded" && refusal.string("message") == "too many connections for uid 33 address 198.51.100.1 (limit 3)")
        #expect(try await fourth.next().event == "bye")
        _ = try await connect(daemon, client: "B", address: "198.51.100.2")

        // A enumerates: its availability budget (here 1 a second, bursts of 2) is spent and
        // its next check waits for the clock.
        try await a.send(#"{"op":"open","form":"signup"}"#)
        for name in ["name0", "name1"] {
            try await a.send(#"{"op":"set","field":"username","value":"\#(name)"}"#)
            #expect(try await usernameAnswer(a) == "ok")
        }
        try await a.send(#"{"op":"set","field":"username","value":"name2"}"#)
        #expect(try await a.sync().contains { $0.string("field") == "username" && $0.string("state") == "validating" })
        // B's check is answered without the clock moving: its own budget is whole.
        try await b.send(#"{"op":"open","form":"signup"}"#)
        try await b.send(#"{"op":"set","field":"username","value":"alice"}"#)
        let state = try await usernameAnswer(b)
        #expect(state == "failed")  // taken: alice exists
        try await daemon.stop()
    }

    /// 50 client ids from one address get one address's allowance: five failed logins in
    /// all, not five each; and an IPv6 /64 counts as one address.
    @Test func rotatingClientIDsFromOneAddressBuysNothing() async throws {
        let daemon = try InProcessDaemon(trustedBridgeUIDs: [Self.bridge])
        let owner = try await daemon.connect(uid: 1000)
        _ = try await owner.signUp("alice", "correct horse battery")
        var answers: [String?] = []
        for index in 0..<50 {
            let connection = try await connect(daemon, client: "rotating-\(index)", address: "2001:db8:0:1::\(index + 1)")
            answers.append(try await login(connection, "alice", "wrong horse"))
            try await connection.disconnect()
        }
        #expect(answers.filter { $0 == "username.invalid_credentials" }.count == 5)
        #expect(answers.filter { $0 == "login.rate_limited" }.count == 45)
        // Another /64 is another address: its own five.
        let elsewhere = try await connect(daemon, client: "elsewhere", address: "2001:db8:0:2::1")
        #expect(try await login(elsewhere, "alice", "wrong horse") == "username.invalid_credentials")
        try await daemon.stop()
    }

    /// Many addresses together: past the backstop, clients that never logged in to the name
    /// are refused; the owner's client that did keeps its allowance.
    @Test func theBackstopStopsManyAddressesButNotTheOwnersKnownClient() async throws {
        let daemon = try InProcessDaemon(trustedBridgeUIDs: [Self.bridge], tuned: { $0.loginBackstopPerHour = 10 })
        let owner = try await daemon.connect(uid: 1000)
        _ = try await owner.signUp("alice", "correct horse battery")
        let phone = try await connect(daemon, client: "alices-phone", address: "192.0.2.10")
        #expect(try await login(phone, "alice", "correct horse battery") == "login.done")
        var answers: [String?] = []
        for index in 0..<12 {
            let attacker = try await connect(daemon, client: "bot-\(index)", address: "203.0.113.\(index + 1)")
            answers.append(try await login(attacker, "alice", "guess \(index)"))
        }
        #expect(answers.prefix(10).allSatisfy { $0 == "username.invalid_credentials" })
        #expect(answers.dropFirst(10).allSatisfy { $0 == "login.rate_limited" })
        #expect(try await login(phone, "alice", "correct horse battery") == "login.done")
        // The owner's browser is known by its client id, not its address: on another network
        // it is still known; another client on the owner's old address is not.
        let phoneOnTheRoad = try await connect(daemon, client: "alices-phone", address: "198.18.0.1")
        #expect(try await login(phoneOnTheRoad, "alice", "correct horse battery") == "login.done")
        let neighbour = try await connect(daemon, client: "someone-else", address: "192.0.2.10")
        #expect(try await login(neighbour, "alice", "correct horse battery") == "login.rate_limited")
        // A local uid is not a front-end client: its own first attempts stand.
        #expect(try await login(try await daemon.connect(uid: 1001), "alice", "correct horse battery") == "login.done")
        try await daemon.stop()
    }

    /// A client sees and joins only its own sessions.
    @Test func aClientSeesOnlyItsOwnSessions() async throws {
        let daemon = try InProcessDaemon(trustedBridgeUIDs: [Self.bridge])
        let a = try await connect(daemon, client: "A")
        try await a.send(#"{"op":"open","form":"signup"}"#)
        let session = try #require(try await a.next("opened").match.string("session"))
        let b = try await connect(daemon, client: "B")
        try await b.send(#"{"op":"sessions","id":1}"#)
        #expect(try await b.next("sessions").match["sessions"] == .array([]))
        try await b.send(#"{"op":"attach","session":"\#(session)","id":2}"#)
        #expect(try await b.next().string("code") == "forbidden")
        // The bridge itself, unnamed, is another owner too.
        let unnamed = try await daemon.connect(uid: Self.bridge)
        try await unnamed.send(#"{"op":"attach","session":"\#(session)","id":3}"#)
        #expect(try await unnamed.next().string("code") == "forbidden")
        let again = try await connect(daemon, client: "A")
        try await again.send(#"{"op":"sessions","id":4}"#)
        let listed = try await again.next("sessions").match["sessions"]?.arrayValue ?? []
        #expect(listed.compactMap { $0.objectValue?["session"]?.stringValue } == [session])
        try await daemon.stop()
    }
}
