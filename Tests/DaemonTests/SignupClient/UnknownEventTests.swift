import SignupClient
import SignupProtocol
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// PROTOCOL.md lets a newer daemon add events and error codes and promises that clients go
/// on: the library surfaces them as `.unknown`, and neither ends a stream nor a connection.
@Suite("SignupClient: what a newer daemon adds", .timeLimit(.minutes(3)))
struct UnknownEventTests {
    @Test("an event the library never saw reaches the caller as .unknown and the stream goes on")
    func unknownEvent() async throws {
        let server = try FakeServer { request in
            switch request["op"]?.stringValue {
            case "ping" where request.idText == "1":
                [#"{"event":"launched","rocket":{"stage":2},"session":"s"}"#, #"{"event":"pong","id":1}"#]
            case "verify":
                [#"{"event":"error","code":"brand_new_code","message":"new refusal","id":\#(request.idText)}"#]
            case "ping":
                [#"{"event":"landed","seq":9}"#, #"{"event":"pong","id":\#(request.idText)}"#]
            default:
                []
            }
        }
        defer { server.stop() }
        let connection = try await SignupConnection.connect(to: server.path)
        #expect(connection.info.server == "fake/1")
        let events = connection.events()
        try await connection.ping()

        // An error code the library does not know is a refusal with that code, not a failure to read.
        await #expect(throws: SignupClientError.refused(SignupServerError(code: .unknown("brand_new_code"), message: "new refusal", id: .integer(2)))) {
            _ = try await connection.verify(token: "x")
        }
        try await connection.ping()
        await connection.close()

        var seen: [ServerEvent] = []
        for await event in events { seen.append(event) }
        #expect(seen.count == 2, "\(seen)")
        guard seen.count == 2, case .unknown(let launched) = seen[0], case .unknown(let landed) = seen[1] else {
            Issue.record("not two unknown events: \(seen)")
            return
        }
        #expect(launched.event == "launched")
        #expect(launched.members["rocket"]?.objectValue?["stage"] == .number("2"))
        #expect(launched.session == "s")
        #expect(landed.event == "landed")
        #expect(await connection.end == .closed)
    }

    @Test("a refusal at the door, a stranger on the socket and no daemon are typed failures")
    func greetingFailures() async throws {
        let full = try FakeServer(greeting: #"{"event":"error","code":"limit_exceeded","message":"too many connections"}"#) { _ in [] }
        defer { full.stop() }
        await #expect(throws: SignupClientError.refusedAtDoor(path: full.path, SignupServerError(code: .known(.limitExceeded), message: "too many connections"))) {
            _ = try await SignupConnection.connect(to: full.path)
        }
        let stranger = try FakeServer(greeting: #"{"greeting":"hi"}"#) { _ in [] }
        defer { stranger.stop() }
        await #expect(throws: SignupClientError.notSignupd(path: stranger.path)) { _ = try await SignupConnection.connect(to: stranger.path) }
        await #expect(throws: SignupClientError.connectFailed(path: "/nonexistent/signupd.sock", errno: ENOENT)) {
            _ = try await SignupConnection.connect(to: "/nonexistent/signupd.sock")
        }
    }
}

@Suite("SignupClient: bounds, cancellation and the end", .timeLimit(.minutes(3)))
struct ConnectionBoundsTests {
    @Test("a cancelled wait is withdrawn and the connection goes on")
    func cancellation() async throws {
        let (verifyArrived, arrived) = AsyncStream.makeStream(of: Void.self)
        let server = try FakeServer { request in
            switch request["op"]?.stringValue {
            case "verify":
                arrived.yield()  // and never answered
                return []
            case "ping": return [#"{"event":"pong","id":\#(request.idText)}"#]
            default: return []
            }
        }
        defer { server.stop() }
        let connection = try await SignupConnection.connect(to: server.path)
        let waiting = Task { try await connection.verify(token: "t") }
        for await _ in verifyArrived { break }
        waiting.cancel()
        await #expect(throws: SignupClientError.cancelled) { try await waiting.value }
        try await connection.ping()  // the connection is unharmed
        await connection.close()
        #expect(await connection.end == .closed)
    }

    @Test("a reader that falls behind its bound ends the connection, typed; so does bye")
    func bounds() async throws {
        let server = try FakeServer { request in
            switch request["op"]?.stringValue {
            case "ping": (1...5).map { #"{"event":"tick","n":\#($0)}"# } + [#"{"event":"pong","id":\#(request.idText)}"#]
            default: []
            }
        }
        defer { server.stop() }
        let connection = try await SignupConnection.connect(to: server.path, configuration: .init(eventBufferLimit: 2))
        let unread = connection.events()
        await #expect(throws: SignupClientError.ended(.failed(.eventBufferFull(limit: 2)))) { try await connection.ping() }
        #expect(await connection.end == .failed(.eventBufferFull(limit: 2)))
        var kept = 0
        for await _ in unread { kept += 1 }
        #expect(kept == 2)

        let leaving = try FakeServer { _ in [#"{"event":"bye","reason":"shutdown"}"#] }
        defer { leaving.stop() }
        let told = try await SignupConnection.connect(to: leaving.path)
        await #expect(throws: SignupClientError.ended(.bye(reason: "shutdown"))) { try await told.ping() }
        #expect(await told.end == .bye(reason: "shutdown"))
    }
}
