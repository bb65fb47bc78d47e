import Foundation
import SignupProtocol
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
        Case("a 1 MiB value", #"{"op":"set","field":"username","value":""# + String(repeating: "v", count: 1 << 20) + #""}"#, "line_too_long"),
        Case("a line of 64 KiB + 1 in a valid request", #"{"op":"ping","pad":""# + String(repeating: " ", count: 65537 - 22) + #""}"#, "line_too_long"),
        Case("many members and no op", "{" + (0..<3000).map { "\"k\($0)\":\($0)" }.joined(separator: ",") + "}", "invalid_request"),
        Case("NaN", #"{"op":"ping","id":NaN}"#, "invalid_json"),
        Case("Infinity", #"{"op":"ping","id":Infinity}"#, "invalid_json"),
        Case("a huge number as a value", #"{"op":"set","field":"username","value":1e999999}"#, "invalid_request"),
        Case("single quotes", "{'op':'ping'}", "invalid_json"),
        Case("a trailing comma", #"{"op":"ping",}"#, "invalid_json"),
        Case("a comment", #"{"op":"ping"} // hi"#, "invalid_json"),
        Case("a byte order mark", [0xEF, 0xBB, 0xBF] + Array(#"{"op":"ping"}"#.utf8), "invalid_json"),
        Case("an overlong UTF-8 encoding", [0x22, 0xC0, 0xAF, 0x22], "invalid_json"),
        Case("a lone surrogate escape", #"{"op":"\ud800"}"#, "invalid_json"),
        Case("an invalid escape", #"{"op":"p\ing"}"#, "invalid_json"),
        Case("an empty object", "{}", "invalid_request"),
        Case("op null", #"{"op":null}"#, "invalid_request"),
        Case("op empty", #"{"op":""}"#, "unknown_op"),
        Case("an escaped NUL in op", #"{"op":"ping\u0000"}"#, "unknown_op"),
        Case("form of the wrong type", #"{"op":"open","form":7}"#, "invalid_request"),
        Case("value null", #"{"op":"set","field":"username","value":null}"#, "invalid_request"),
        Case("field an array", #"{"op":"set","field":["username"],"value":"x"}"#, "invalid_request"),
        Case("token a number", #"{"op":"verify","token":12}"#, "invalid_request"),
        Case("a top-level number", "12", "invalid_request"),
        Case("33 nested objects", String(repeating: #"{"a":"#, count: 33) + "1" + String(repeating: "}", count: 33), "invalid_json"),
        Case("a string where an object is expected", #""{\"op\":\"ping\"}""#, "invalid_request"),
        Case("a session of the wrong type", #"{"op":"submit","session":1}"#, "invalid_request"),
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

    @Test("a value past the field's byte cap is refused with value_too_long and not stored")
    func valueTooLong() throws {
        let client = try SharedDaemon.client()
        _ = try client.open("signup")
        let kept = try client.set("password", "pass word")
        #expect(kept.contains { $0.string("field") == "password" && $0.string("state") == "ok" })
        try client.send(Request(id: .string("long"), .set(session: nil, field: "password", value: String(repeating: "x", count: 4097))))
        let error = try client.next("error")
        #expect(error.string("code") == "value_too_long")
        #expect(error["id"] == .string("long"))
        #expect(error.string("message")?.contains("4096") == true)
        #expect(try client.sync().isEmpty)
        // The field keeps its previous value: the same value again changes nothing, and the snapshot still says ok.
        #expect(try client.set("password", "pass word").isEmpty)
        try client.send(Request(.snapshot(session: nil)))
        let password = try client.next { $0.event == "validation" && $0.string("field") == "password" }.match
        #expect(password.string("state") == "ok")
        // A username past its 1020-byte input cap, likewise.
        try client.send(Request(.set(session: nil, field: "username", value: String(repeating: "a", count: 1021))))
        #expect(try client.next("error").string("code") == "value_too_long")
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
        try crowded.send(Request(.open(form: "login", locale: nil)))
        #expect(try crowded.next("error").string("code") == "limit_exceeded")
        #expect(try crowded.sync().isEmpty)
    }

    @Test("operations in the wrong order get their errors; the connection survives")
    func wrongOrder() throws {
        let client = try SharedDaemon.client()
        let session = try client.open("signup")
        try client.send(Request(.close(session: nil)))
        _ = try client.next("closed")
        for (request, code) in [
            (Request(.set(session: nil, field: "username", value: "x")), "no_session"),
            (Request(.submit(session: nil)), "no_session"),
            (Request(.close(session: nil)), "no_session"),
            (Request(.snapshot(session: session)), "unknown_session"),
            (Request(.set(session: session, field: "username", value: "x")), "unknown_session"),
        ] {
            try client.send(request)
            #expect(try client.next("error").string("code") == code)
        }
        #expect(try client.sync().isEmpty)
    }

    @Test("a submit flood earns errors, never a crash or a stuck session")
    func submitFlood() throws {
        let client = try SharedDaemon.client()
        _ = try client.open("signup")
        let flood = String(repeating: #"{"op":"submit"}"# + "\n", count: 500)
        try client.sendRaw(flood)
        let replies = try client.sync()
        let codes = Set(replies.compactMap { $0.string("code") })
        #expect(replies.count == 500)
        #expect(codes.isSubset(of: ["not_ready", "rate_limited"]) && codes.contains("rate_limited"))
        // Still a working session.
        #expect(try client.set("password", "abc").first?.string("state") == "failed")
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
