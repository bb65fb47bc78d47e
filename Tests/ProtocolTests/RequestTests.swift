import SignupProtocol
import Testing

@Suite("Request decoding")
struct RequestTests {
    private func decode(_ text: String) throws(RequestError) -> Request {
        try Request.decode(line: Array(text.utf8))
    }

    @Test("every operation decodes", arguments: [
        (#"{"op":"describe"}"#, Request(.describe(locale: nil))),
        (#"{"op":"describe","locale":"zh_CN"}"#, Request(.describe(locale: "zh-CN"))),
        (#"{"op":"locale","locale":"zh-Hans-CN"}"#, Request(.locale(session: nil, locale: "zh-Hans-CN"))),
        (#"{"op":"open","form":"phone-login","locale":"en"}"#, Request(.open(form: "phone-login", locale: "en"))),
        (#"{"op":"ping","id":7}"#, Request(id: .integer(7), .ping)),
        (#"{"op":"open","form":"signup","id":"a"}"#, Request(id: .string("a"), .open(form: "signup", locale: nil))),
        (#"{"op":"attach","session":"s1"}"#, Request(.attach(session: "s1"))),
        (#"{"op":"set","field":"username","value":"bob"}"#, Request(.set(session: nil, field: "username", value: "bob"))),
        (#"{"op":"set","session":"s2","field":"f","value":""}"#, Request(.set(session: "s2", field: "f", value: ""))),
        (#"{"op":"submit"}"#, Request(.submit(session: nil))),
        (#"{"op":"snapshot","session":null}"#, Request(.snapshot(session: nil))),
        (#"{"op":"close","extra":[1,{"x":2}]}"#, Request(.close(session: nil))),
        (#"{"op":"verify","token":"t"}"#, Request(.verify(token: "t"))),
    ])
    func decodes(_ text: String, _ expected: Request) throws {
        #expect(try decode(text) == expected)
    }

    /// helper-40: a request refused for naming a member twice lost its `id`, so a client
    /// matching answers by id waited for ever. The id is echoed when the request names it once.
    @Test("a member named twice is refused with the request's id, unless the id is what is named twice", arguments: [
        (#"{"op":"set","field":"password","value":"abcdef","value":"zzzzzz","id":19}"#, RequestID.integer(19) as RequestID?),
        (#"{"id":"a","op":"ping","op":"describe"}"#, .string("a")),
        (#"{"op":"close","extra":{"x":1,"x":2},"id":3}"#, .integer(3)),
        (#"{"op":"ping","id":1,"id":2}"#, nil),
        (#"{"op":"ping","op":"ping","id":[1]}"#, nil),
        (#"{"op":"ping","op":"ping"}"#, nil),
    ])
    func duplicateKeepsTheID(_ text: String, _ id: RequestID?) {
        #expect { try decode(text) } throws: { error in
            guard let error = error as? RequestError else { return false }
            return error.code == .invalidRequest && error.message.hasPrefix("duplicate member") && error.id == id
        }
    }

    /// helper-41: a line with a duplicate and a JSON fault after it was invalid_request,
    /// and invalid_json with the fault first: the code now does not depend on the order.
    @Test("a line that names a member twice and is not JSON either is invalid_json, whichever comes first", arguments: [
        #"{"op":"ping","id":28,"x":1,"x":2,"bad":tru}"#, #"{"op":"ping","id":28,"bad":tru,"x":1,"x":2}"#,
        #"{"op":"ping","x":1,"x":2,}"#, "{\"op\":\"ping\",\"x\":1,\"x\":2,\"y\":\"\u{01}\"}",
        #"{"op":"ping","x":1,"x":2,"deep":"# + String(repeating: "[", count: 40) + String(repeating: "]", count: 40) + "}",
    ])
    func duplicateAndInvalidJSON(_ text: String) {
        #expect { try decode(text) } throws: { ($0 as? RequestError)?.code == .invalidJSON }
    }

    /// helper-41: names that Swift's String == calls equal (canonically equivalent) are two
    /// names in JSON, compared by code point (RFC 8259): not duplicates; unknown, ignored.
    @Test("canonically equivalent member names are different names", arguments: [
        "{\"op\":\"ping\",\"id\":50,\"\u{212A}\":1,\"K\":2}", "{\"op\":\"ping\",\"id\":50,\"\u{037E}\":1,\";\":2}",
        "{\"op\":\"ping\",\"id\":50,\"\u{E9}\":1,\"e\u{301}\":2}",
        // Past the parser's linear scan (8 members): the set compares bytes too.
        "{\"op\":\"ping\",\"id\":50,\"a\":1,\"b\":1,\"c\":1,\"d\":1,\"e\":1,\"f\":1,\"\u{212B}\":1,\"\u{C5}\":2}",
    ])
    func canonicalEquivalentsAreDistinct(_ text: String) throws {
        #expect(try decode(text) == Request(id: .integer(50), .ping))
    }

    @Test("encoding and decoding agree")
    func roundTrip() throws {
        let requests = [
            Request(id: .integer(-3), .set(session: "s", field: "password", value: "p\"\n")),
            Request(id: .string("x"), .verify(token: "abc")), Request(.open(form: "login", locale: nil)), Request(.open(form: "phone-login", locale: "zh-CN")),
            Request(id: .integer(2), .locale(session: "s", locale: "en")), Request(.describe(locale: "zh-CN")),
        ]
        for request in requests {
            var writer = JSONWriter()
            request.encode(into: &writer)
            #expect(writer.bytes.last == 0x0A)
            #expect(try Request.decode(line: Array(writer.bytes.dropLast())) == request)
        }
    }

    @Test("bad requests get their stable code", arguments: [
        ("not json", ErrorCode.invalidJSON), ("[1]", .invalidRequest), ("42", .invalidRequest), (#"{"id":1}"#, .invalidRequest),
        (#"{"op":5}"#, .invalidRequest), (#"{"op":"fly"}"#, .unknownOp), (#"{"op":"open"}"#, .invalidRequest),
        (#"{"op":"set","field":"f","value":5}"#, .invalidRequest), (#"{"op":"ping","id":1.5}"#, .invalidRequest),
        (#"{"op":"ping","id":99999999999999999999}"#, .invalidRequest), (#"{"op":"ping","id":true}"#, .invalidRequest),
        (#"{"op":"ping","op":"ping"}"#, .invalidRequest), (#"{"op":"ping""#, .invalidJSON),
        // An empty session id names no session: refused for every operation that takes one.
        (#"{"op":"attach","session":""}"#, .invalidRequest), (#"{"op":"set","session":"","field":"f","value":""}"#, .invalidRequest),
        (#"{"op":"submit","session":""}"#, .invalidRequest), (#"{"op":"snapshot","session":""}"#, .invalidRequest),
        (#"{"op":"close","session":""}"#, .invalidRequest), (#"{"op":"locale","session":"","locale":"en"}"#, .invalidRequest),
    ])
    func errors(_ text: String, _ code: ErrorCode) {
        #expect { try decode(text) } throws: { ($0 as? RequestError)?.code == code }
    }

    @Test("null: an optional member's is absent, a required member's and the id's are refused (PROTOCOL.md, helper-48)")
    func null() throws {
        #expect(try decode(#"{"op":"set","session":null,"field":"f","value":"v"}"#) == Request(.set(session: nil, field: "f", value: "v")))
        #expect(try decode(#"{"op":"open","form":"login","locale":null}"#) == Request(.open(form: "login", locale: nil)))
        #expect(try decode(#"{"op":"ping","id":-0}"#) == Request(id: .integer(0), .ping))
        #expect { try decode(#"{"op":"set","field":null,"value":"v"}"#) } throws: {
            ($0 as? RequestError) == RequestError(.invalidRequest, #""field" must be a string, not null"#)
        }
        #expect { try decode(#"{"op":"ping","id":null}"#) } throws: {
            ($0 as? RequestError) == RequestError(.invalidRequest, #""id" must be a string or an integer, not null"#)
        }
    }

    @Test("the id is echoed on errors once it could be read")
    func idOnError() {
        #expect { try decode(#"{"op":"fly","id":"q"}"#) } throws: { ($0 as? RequestError)?.id == .string("q") }
        #expect { try decode(#"{"op":"set","id":3}"#) } throws: { ($0 as? RequestError)?.id == .integer(3) }
    }
}
