import Foundation
import Protocol
import Testing

/// Every malformed input gets its documented error, and the same connection still works.
@Suite("Bad input over a real socket")
struct BadInputTests {
    /// A line as sent (newline added) and the error code it must earn.
    struct Case: CustomTestStringConvertible, Sendable {
        let name: String
        let bytes: [UInt8]
        let code: String
        var testDescription: String { name }

        init(_ name: String, _ text: String, _ code: String) {
            self.init(name, Array(text.utf8), code)
        }

        init(_ name: String, _ bytes: [UInt8], _ code: String) {
            self.name = name
            self.bytes = bytes
            self.code = code
        }
    }

    static let cases: [Case] = [
        Case("invalid JSON", "{op:ping}", "invalid_json"),
        Case("truncated JSON", #"{"op":"ping""#, "invalid_json"),
        Case("trailing garbage", #"{"op":"ping"} x"#, "invalid_json"),
        Case("invalid UTF-8 in a string", [0x7B, 0x22, 0x6F, 0x70, 0x22, 0x3A, 0x22, 0xC3, 0x28, 0x22, 0x7D], "invalid_json"),
        Case("invalid UTF-8 outside strings", [0xFF, 0xFE], "invalid_json"),
        Case("a NUL byte", [0x7B, 0x00, 0x7D], "invalid_json"),
        Case("a raw control character in a string", "{\"op\":\"pi\u{1}ng\"}", "invalid_json"),
        Case("a non-object", "[1,2,3]", "invalid_request"),
        Case("a bare string", "\"ping\"", "invalid_request"),
        Case("null", "null", "invalid_request"),
        Case("no op", #"{"id":1}"#, "invalid_request"),
        Case("op of the wrong type", #"{"op":1}"#, "invalid_request"),
        Case("value of the wrong type", #"{"op":"set","field":"username","value":1}"#, "invalid_request"),
        Case("field missing", #"{"op":"set","value":"x"}"#, "invalid_request"),
        Case("id of the wrong type", #"{"op":"ping","id":{}}"#, "invalid_request"),
        Case("id too large", #"{"op":"ping","id":123456789012345678901234567890}"#, "invalid_request"),
        Case("duplicate keys", #"{"op":"ping","op":"describe"}"#, "invalid_request"),
        Case("deep nesting", "{\"op\":\"ping\",\"x\":" + String(repeating: "[", count: 5000) + String(repeating: "]", count: 5000) + "}", "invalid_json"),
        Case("unknown op", #"{"op":"launch"}"#, "unknown_op"),
        Case("unknown form", #"{"op":"open","form":"register"}"#, "unknown_form"),
        Case("set without a session", #"{"op":"set","field":"username","value":"x"}"#, "no_session"),
        Case("submit without a session", #"{"op":"submit"}"#, "no_session"),
        Case("unknown session", #"{"op":"snapshot","session":"nope"}"#, "unknown_session"),
        Case("attach to a session that does not exist", #"{"op":"attach","session":"0000000000000000"}"#, "unknown_session"),
        Case("verify a malformed token", #"{"op":"verify","token":"x"}"#, "invalid_token"),
        Case("a line over the limit", Array(repeating: UInt8(ascii: "a"), count: 65537), "line_too_long"),
        Case("a lone CR inside JSON is whitespace, but inside a string it is not", "{\"op\":\"pi\rng\"}", "invalid_json"),
    ]

    @Test("each bad line earns its error code and the connection keeps working", arguments: cases)
    func badLine(_ bad: Case) throws {
        let client = try SharedDaemon.client()
        try client.sendRaw(bad.bytes + [0x0A])
        let before = try client.sync()
        let errors = before.filter { $0.event == "error" }
        #expect(errors.count == 1)
        #expect(errors.first?.string("code") == bad.code)
        #expect(errors.first?.string("message")?.isEmpty == false)
        // Still a working connection: a session opens and validates.
        _ = try client.open("signup")
        let events = try client.set("password", "abc")
        #expect(events.first?.string("state") == "failed")
    }

    @Test("the id of a bad request is echoed on its error")
    func idEchoed() throws {
        let client = try SharedDaemon.client()
        try client.sendRaw(#"{"op":"launch","id":"r1"}"# + "\n")
        let error = try client.next("error")
        #expect(error["id"] == .string("r1"))
        #expect(error.string("code") == "unknown_op")
    }

    @Test("session rule violations: unknown field, not ready, finished, limits")
    func sessionErrors() throws {
        let client = try SharedDaemon.client()
        _ = try client.open("signup")
        try client.send(Request(id: .string("f"), .set(session: nil, field: "email", value: "x")))
        #expect(try client.next("error").string("code") == "unknown_field")
        try client.send(Request(id: .string("s"), .submit(session: nil)))
        let notReady = try client.next("error")
        #expect(notReady.string("code") == "not_ready")
        #expect(notReady["id"] == .string("s"))
        #expect(try client.sync().isEmpty)

        let name = uniqueName()
        #expect(try client.signup(name, "pass word")["ok"] == .bool(true))
        _ = try client.next("busy", "value", .bool(false))
        try client.send(Request(.set(session: nil, field: "username", value: "other")))
        #expect(try client.next("error").string("code") == "finished")
        try client.send(Request(.submit(session: nil)))
        #expect(try client.next("error").string("code") == "finished")
        _ = try client.sync()

        // More sessions than allowed on one connection.
        let crowded = try SharedDaemon.client()
        for _ in 0..<16 { _ = try crowded.open("login") }
        try crowded.send(Request(.open(form: "login")))
        #expect(try crowded.next("error").string("code") == "limit_exceeded")
        #expect(try crowded.sync().isEmpty)
    }

    @Test("a line split across many writes and CRLF endings are accepted")
    func splitWrites() throws {
        let client = try SharedDaemon.client()
        for byte in Array(#"{"op":"ping","id":"split"}"#.utf8) + [0x0D, 0x0A] {
            try client.sendRaw([byte])
        }
        #expect(try client.next("pong")["id"] == .string("split"))
    }

    @Test("a half-closed client still gets every answer, including a late availability result")
    func halfClose() throws {
        let client = try SharedDaemon.client()
        try client.sendRaw(#"{"op":"open","form":"signup"}"# + "\n" + #"{"op":"set","field":"username","value":"\#(uniqueName())"}"#)
        shutdown(client.fd, Int32(SHUT_WR))
        let result = try client.awaitUsernameResult()
        #expect(result.string("state") == "ok")
        #expect(try client.readLine() == nil)
    }
}
