import SignupClient
import SignupProtocol
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// PROTOCOL.md lets a newer daemon add events and error codes and promises that clients go
/// on: the library surfaces them as `.unknown`, and neither ends a stream nor a connection.
@Suite("SignupClient: what a newer daemon adds")
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

    @Test("a refusal at the door and a stranger on the socket are typed failures")
    func greetingFailures() async throws {
        let busy = try FakeServer { _ in [] }
        _ = busy  // greets normally: the control
        #expect(try await SignupConnection.connect(to: busy.path).info.protocolName == "signup/1")
        await #expect(throws: SignupClientError.connectFailed(path: "/nonexistent/signupd.sock", errno: ENOENT)) {
            _ = try await SignupConnection.connect(to: "/nonexistent/signupd.sock")
        }
    }
}
