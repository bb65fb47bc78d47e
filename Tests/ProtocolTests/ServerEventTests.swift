import SignupProtocol
import Testing

@Suite("Server event encoding")
struct ServerEventTests {
    static let samples: [ServerEvent] = [
        .hello(server: "signupd/test", forms: ["signup", "login"], limits: ServerLimits()),
        .description(forms: [FormDescription(name: "f", fields: [.init(name: "a", secret: true, label: "A")], submitLabel: "Go")], locale: nil, id: .integer(1)),
        .description(forms: [FormDescription(name: "f", fields: [.init(name: "a", secret: false, label: "号码", kind: "phone")], submitLabel: "登录", title: "T", action: "login")], locale: "zh-CN", id: nil),
        .opened(session: "s", form: "signup", locale: nil, resume: nil, id: .string("x")),
        .opened(session: "s", form: "signup", locale: "en", resume: "0123456789abcdef0123456789abcdef", id: nil),
        .resumed(session: "s", form: "signup", locale: "en", id: .integer(4)),
        .clientNamed(client: "browser-1", address: "2001:db8::1", id: .integer(5)),
        .clientNamed(client: "browser-2", address: nil, id: nil),
        .opened(session: "s", form: "signup", locale: "zh-CN", resume: nil, id: nil),
        .attached(session: "s", form: "login", locale: "en", id: nil),
        .localeChanged(session: "s", locale: "zh-CN", id: .integer(9)),
        .closed(session: "s", id: nil),
        .pong(id: .integer(-5)),
        .verified(user: "ü", id: nil),
        .sessionList(sessions: [SessionSummary(session: "s", form: "signup", ageSeconds: 3, views: 1), SessionSummary(session: "t", form: "login", ageSeconds: 70, views: 0, detachedSeconds: 12)], id: .integer(2)),
        .sessionList(sessions: [], id: nil),
        .sessionList(sessions: [SessionSummary(session: "s", form: "signup", ageSeconds: 3, views: 1)], next: "1234-00ab", id: .string("p2")),
        .session(session: "s", seq: 1, .validation(field: "username", state: .failed, message: LocalizedMessage(id: "username.too_long", params: [.init("max", .integer(39)), .init("s", .string("\""))], text: "a\nb\"c")), id: nil),
        .session(session: "s", seq: 2, .enabled(true), id: .integer(3)),
        .session(session: "s", seq: 3, .busy(false), id: nil),
        .session(session: "s", seq: 4, .result(ok: true, message: LocalizedMessage(id: "login.done", text: "Logged in"), user: "u", token: "t"), id: nil),
        .error(code: .notReady, message: "m", session: "s", id: .string("q")),
        .bye(reason: "shutdown"),
        .description(
            forms: [
                FormDescription(
                    name: "f", fields: [.init(name: "u", secret: false, label: "U", rules: FieldRulesDescription(minCharacters: 1, maxCharacters: 39, appliesTo: ["NFC"], bidiRule: "RFC5893"), kind: "username")],
                    submitLabel: "Go"
                )
            ],
            locale: "en", id: .string("d")
        ),
    ]

    @Test("every event decodes back to itself", arguments: samples)
    func decodes(_ event: ServerEvent) throws {
        #expect(try ServerEvent.decode(line: Array(event.line.dropLast())) == event)
    }

    @Test("an unknown event or error code decodes as .unknown, with every member as sent")
    func unknownEventsAndCodesAreKept() throws {
        let launched = try ServerEvent.decode(line: Array(#"{"event":"launched","id":7,"rocket":{"stage":2}}"#.utf8))
        guard case .unknown(let event) = launched else { Issue.record("not .unknown: \(launched)"); return }
        #expect(event.event == "launched")
        #expect(event.id == .integer(7))
        #expect(launched.id == .integer(7))
        #expect(event.members["rocket"]?.objectValue?["stage"] == .number("2"))
        #expect(event.errorCode == nil)
        // It encodes back as it came.
        #expect(String(decoding: launched.line, as: UTF8.self) == #"{"event":"launched","id":7,"rocket":{"stage":2}}"# + "\n")

        let newCode = try ServerEvent.decode(line: Array(#"{"event":"error","code":"new_code","message":"m","session":"s"}"#.utf8))
        guard case .unknown(let error) = newCode else { Issue.record("not .unknown: \(newCode)"); return }
        #expect(error.errorCode == "new_code")
        #expect(error.message == "m")
        #expect(error.session == "s")
        // A known code stays a typed error.
        #expect(try ServerEvent.decode(line: Array(#"{"event":"error","code":"forbidden","message":"m"}"#.utf8)) == .error(code: .forbidden, message: "m", session: nil, id: nil))
    }

    @Test func malformedKnownEventsStillFail() {
        #expect(throws: ServerEventDecodingError.invalidMember(event: "pong", member: "id")) { try ServerEvent.decode(line: Array(#"{"event":"pong","id":true}"#.utf8)) }
        #expect(throws: ServerEventDecodingError.invalidMember(event: "enabled", member: "value")) { try ServerEvent.decode(line: Array(#"{"event":"enabled","session":"s","seq":1}"#.utf8)) }
        #expect(throws: ServerEventDecodingError.notAnObject) { try ServerEvent.decode(line: Array("[1]".utf8)) }
    }

    @Test("every event is one line of valid JSON naming its event", arguments: samples)
    func oneLine(_ event: ServerEvent) throws {
        let line = event.line
        #expect(line.last == 0x0A)
        #expect(line.dropLast().contains(0x0A) == false)
        let parsed = try #require(try JSONParser.parse(Array(line.dropLast())).objectValue)
        #expect(parsed["event"]?.stringValue != nil)
        if case .hello = event {
            #expect(parsed["protocol"] == .string("signup/1"))
            #expect(parsed["limits"]?.objectValue?["maxLineBytes"] == .number("65536"))
            #expect(parsed["forms"]?.arrayValue?.count == 2)
        }
        if case .session(_, _, .validation(_, _, let message), _) = event {
            #expect(parsed["messageId"] == .string(message.id))
            #expect(parsed["params"]?.objectValue?["max"] == .number("39"))
            #expect(parsed["params"]?.objectValue?["s"] == .string("\""))
        }
        if case .session(_, let seq, _, _) = event {
            #expect(parsed["seq"]?.int64Value == Int64(seq))
            #expect(parsed["session"] == .string("s"))
        }
    }

    /// A session's events are written as fixed text between their values (issue 29): the
    /// bytes PROTOCOL.md shows, members in its order, every value escaped as any other.
    @Test("session events, byte for byte", arguments: [
        (
            ServerEvent.session(session: "s\"1", seq: 4_294_967_296_123, .validation(field: "pass\nword", state: .validating, message: LocalizedMessage(id: "password.checking", text: "Checking…")), id: .string("r\\1")),
            #"{"event":"validation","session":"s\"1","seq":4294967296123,"id":"r\\1","field":"pass\nword","state":"validating","message":"Checking…","messageId":"password.checking","params":{}}"#
        ),
        (
            .session(session: "s", seq: 0, .validation(field: "f", state: .failed, message: LocalizedMessage(id: "x.y", params: [.init("min", .integer(-12)), .init("field", .string("密码\u{7F}"))], text: "t")), id: .integer(Int64.min)),
            #"{"event":"validation","session":"s","seq":0,"id":-9223372036854775808,"field":"f","state":"failed","message":"t","messageId":"x.y","params":{"min":-12,"field":"密码\u007f"}}"#
        ),
        (.session(session: "s", seq: 10, .validation(field: "f", state: .empty, message: .empty), id: nil), #"{"event":"validation","session":"s","seq":10,"field":"f","state":"empty","message":"","messageId":"","params":{}}"#),
        (.session(session: "s", seq: 9, .validation(field: "f", state: .ok, message: .empty), id: .integer(0)), #"{"event":"validation","session":"s","seq":9,"id":0,"field":"f","state":"ok","message":"","messageId":"","params":{}}"#),
        (.session(session: "s", seq: 2, .enabled(true), id: .integer(3)), #"{"event":"enabled","session":"s","seq":2,"id":3,"value":true}"#),
        (.session(session: "s", seq: 3, .busy(false), id: nil), #"{"event":"busy","session":"s","seq":3,"value":false}"#),
        (
            .session(session: "s", seq: 4, .result(ok: true, message: LocalizedMessage(id: "login.done", text: "Logged in"), user: "ü", token: "t"), id: nil),
            #"{"event":"result","session":"s","seq":4,"ok":true,"message":"Logged in","messageId":"login.done","params":{},"user":"ü","token":"t"}"#
        ),
        (
            .session(session: "s", seq: 5, .result(ok: false, message: LocalizedMessage(id: "a", params: [.init("n", .integer(1))], text: "b"), user: nil, token: nil), id: .string("")),
            #"{"event":"result","session":"s","seq":5,"id":"","ok":false,"message":"b","messageId":"a","params":{"n":1}}"#
        ),
    ])
    func sessionEventBytes(_ event: ServerEvent, _ expected: String) throws {
        #expect(String(decoding: event.line, as: UTF8.self) == expected + "\n")
        #expect(try ServerEvent.decode(line: Array(expected.utf8)) == event)
    }

    @Test("a session event after other output in the same writer starts its own line")
    func afterOtherOutput() {
        var writer = JSONWriter()
        ServerEvent.pong(id: nil).encode(into: &writer)
        ServerEvent.session(session: "s", seq: 1, .busy(true), id: nil).encode(into: &writer)
        #expect(String(decoding: writer.bytes, as: UTF8.self) == #"{"event":"pong"}"# + "\n" + #"{"event":"busy","session":"s","seq":1,"value":true}"# + "\n")
    }
}

/// The writer writes any JSON value, bare or nested, as the parser reads it back.
@Suite struct JSONWriterValueTests {
    /// The escape scan reads eight bytes at a time: a byte that needs escaping is found at
    /// every place in a word and in the bytes after the last whole word, and one of 0x80 or
    /// more (UTF-8) is not taken for one.
    @Test("every byte that needs escaping is escaped wherever it is", arguments: [0x00, 0x0A, 0x1F, 0x22, 0x5C, 0x7F] as [UInt8])
    func escapesAnywhere(_ special: UInt8) throws {
        for length in [1, 7, 8, 9, 16, 23] {
            for place in 0..<length {
                var bytes = [UInt8](repeating: UInt8(ascii: "a"), count: length)
                bytes[place] = special
                let text = String(decoding: bytes, as: UTF8.self)
                var writer = JSONWriter()
                writer.value(.string(text))
                #expect(!writer.bytes.contains { $0 < 0x20 || $0 == 0x7F }, "raw byte \(special) at \(place) of \(length)")
                #expect(try JSONParser.parse(writer.bytes) == .string(text), "byte \(special) at \(place) of \(length)")
            }
        }
        let wide = String(repeating: "é密\u{10FFFF}", count: 5)
        var writer = JSONWriter()
        writer.value(.string(wide))
        #expect(writer.bytes == [UInt8(ascii: "\"")] + Array(wide.utf8) + [UInt8(ascii: "\"")])
    }

    @Test(arguments: [
        #""a \"quoted\"\nline""#, "null", "true", "-12", "1.5e3", "[]", "{}", #"[1,"x",[true,null],{"k":{"n":[]}}]"#,
        #"{"a":1,"b":[{"c":"d"},false],"e":{}}"#,
    ])
    func roundTrips(_ text: String) throws {
        let value = try JSONParser.parse(Array(text.utf8))
        var writer = JSONWriter()
        writer.value(value)
        #expect(String(decoding: writer.bytes, as: UTF8.self) == text)
    }

    /// Commas are kept per level in a 64-bit word and an array past it: a value nested past
    /// 64 levels, with elements before and after each deeper one, comes out as it went in.
    @Test("nested past 64 levels, with elements on both sides of each level", arguments: [63, 64, 65, 130])
    func deep(_ levels: Int) throws {
        var text = "0"
        for level in 0..<levels {
            text = level % 2 == 0 ? "[1,\(text),\"x\"]" : "{\"a\":true,\"b\":\(text),\"c\":null}"
        }
        let value = try JSONParser.parse(Array(text.utf8), maxDepth: 200)
        var writer = JSONWriter()
        writer.value(value)
        #expect(String(decoding: writer.bytes, as: UTF8.self) == text)
        // Reused after a reset: no level left over.
        writer.reset()
        writer.value(value)
        #expect(String(decoding: writer.bytes, as: UTF8.self) == text)
    }
}
