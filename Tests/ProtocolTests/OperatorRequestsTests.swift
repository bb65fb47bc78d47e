import SignupProtocol
import Testing

/// The operators' requests and answers (issue 26): status, sessions with all, signups.
@Suite("Operator requests and events")
struct OperatorRequestsTests {
    private func decode(_ text: String) throws(RequestError) -> Request {
        try Request.decode(line: Array(text.utf8))
    }

    /// A JSON string literal of `text` (quotes and backslashes escaped; the rest as is).
    private static func json(_ text: String) -> String {
        var out = "\""
        for character in text {
            if character == "\"" || character == "\\" { out.append("\\") }
            out.append(character)
        }
        return out + "\""
    }

    @Test("each decodes to its operation", arguments: [
        (#"{"op":"status"}"#, Request(.status)),
        (#"{"op":"status","id":9}"#, Request(id: .integer(9), .status)),
        (#"{"op":"sessions"}"#, Request(.sessions())),
        (#"{"op":"sessions","all":true}"#, Request(.allSessions())),
        (#"{"op":"sessions","all":false}"#, Request(.sessions())),
        (#"{"op":"sessions","limit":500}"#, Request(.sessions(SessionsPage(limit: 500)))),
        (#"{"op":"sessions","limit":1,"after":"12-ab","all":true}"#, Request(.allSessions(SessionsPage(limit: 1, after: "12-ab")))),
        (#"{"op":"sessions","limit":null,"after":null}"#, Request(.sessions())),
        (#"{"op":"signups"}"#, Request(.signups(pause: nil, message: nil))),
        (#"{"op":"signups","pause":true}"#, Request(.signups(pause: true, message: nil))),
        (#"{"op":"signups","pause":true,"message":"m"}"#, Request(.signups(pause: true, message: "m"))),
        (#"{"op":"signups","pause":false}"#, Request(.signups(pause: false, message: nil))),
        (#"{"op":"signups","id":"p","message":"back at 14:00 — 稍后","pause":true}"#, Request(id: .string("p"), .signups(pause: true, message: "back at 14:00 — 稍后"))),
    ])
    func decodes(_ text: String, _ expected: Request) throws {
        #expect(try decode(text) == expected)
    }

    @Test("status and signups are protocol operation names")
    func names() {
        #expect(Request.operationNames.contains("status"))
        #expect(Request.operationNames.contains("signups"))
    }

    @Test("refused with invalid_request", arguments: [
        // A message goes with pause: true only.
        #"{"op":"signups","message":"m"}"#,
        #"{"op":"signups","pause":false,"message":"m"}"#,
        // Control characters: C0, DEL, C1.
        #"{"op":"signups","pause":true,"message":"a\nb"}"#,
        #"{"op":"signups","pause":true,"message":"a\tb"}"#,
        #"{"op":"signups","pause":true,"message":"bell\u0007"}"#,
        #"{"op":"signups","pause":true,"message":"\u001b[31mred"}"#,
        #"{"op":"signups","pause":true,"message":"del\u007f"}"#,
        #"{"op":"signups","pause":true,"message":"nel\u0085"}"#,
        // Line separators and bidirectional overrides reorder what people read.
        #"{"op":"signups","pause":true,"message":"a\u2028b"}"#,
        #"{"op":"signups","pause":true,"message":"back \u202Eat 14:00"}"#,
        #"{"op":"signups","pause":true,"message":"\u2066isolate"}"#,
        // A front end's client id: no control or format characters (administrators see it).
        #"{"op":"client","client":"web\u001b[2J"}"#,
        #"{"op":"client","client":"web\nuid 0"}"#,
        #"{"op":"client","client":"web\u202Eevil"}"#,
        #"{"op":"client","client":"zero\u200Bwidth"}"#,
        // Wrong types.
        #"{"op":"signups","pause":"yes"}"#,
        #"{"op":"signups","pause":true,"message":5}"#,
        #"{"op":"sessions","all":1}"#,
    ])
    func refused(_ text: String) {
        #expect { try decode(text) } throws: { ($0 as? RequestError)?.code == .invalidRequest }
    }

    @Test("the message may be maxSignupsMessageBytes UTF-8 bytes, not one more")
    func messageLength() throws {
        let limit = Request.maxSignupsMessageBytes
        #expect(limit == 512)
        let longest = String(repeating: "a", count: limit)
        #expect(try decode(#"{"op":"signups","pause":true,"message":"# + Self.json(longest) + "}") == Request(.signups(pause: true, message: longest)))
        let over = String(repeating: "a", count: limit + 1)
        #expect { try decode(#"{"op":"signups","pause":true,"message":"# + Self.json(over) + "}") } throws: { ($0 as? RequestError)?.code == .invalidRequest }
        // Bytes, not characters: 171 euro signs are 513 bytes.
        let euros = String(repeating: "€", count: limit / 3 + 1)
        #expect(euros.count < limit && euros.utf8.count > limit)
        #expect { try decode(#"{"op":"signups","pause":true,"message":"# + Self.json(euros) + "}") } throws: { ($0 as? RequestError)?.code == .invalidRequest }
        let fits = String(repeating: "€", count: limit / 3) + "ab"
        #expect(fits.utf8.count == limit)
        #expect(try decode(#"{"op":"signups","pause":true,"message":"# + Self.json(fits) + "}") == Request(.signups(pause: true, message: fits)))
    }

    @Test("a refusal echoes the request's id")
    func refusalKeepsID() {
        #expect { try decode(#"{"op":"signups","id":4,"message":"m"}"#) } throws: { ($0 as? RequestError)?.id == .integer(4) }
    }

    @Test("encoding and decoding agree", arguments: [
        Request(.status), Request(id: .integer(1), .status),
        Request(.sessions()), Request(.allSessions()), Request(id: .string("a"), .allSessions()),
        Request(.sessions(SessionsPage(limit: 7, after: "1-0a"))), Request(.allSessions(SessionsPage(after: "99-ff"))),
        Request(.signups(pause: nil, message: nil)), Request(.signups(pause: true, message: nil)),
        Request(.signups(pause: true, message: "back \"soon\" \\ 稍后")), Request(id: .integer(-2), .signups(pause: false, message: nil)),
    ])
    func roundTrip(_ request: Request) throws {
        var writer = JSONWriter()
        request.encode(into: &writer)
        #expect(writer.bytes.last == 0x0A)
        #expect(!writer.bytes.dropLast().contains(0x0A))
        #expect(try Request.decode(line: Array(writer.bytes.dropLast())) == request)
    }

    @Test("sessions with all is sent with all: true; without, no all member")
    func allMember() throws {
        var all = JSONWriter()
        Request(.allSessions()).encode(into: &all)
        let allObject = try #require(try JSONParser.parse(Array(all.bytes.dropLast())).objectValue)
        #expect(allObject["op"] == .string("sessions"))
        #expect(allObject["all"] == .bool(true))
        var mine = JSONWriter()
        Request(.sessions()).encode(into: &mine)
        let mineObject = try #require(try JSONParser.parse(Array(mine.bytes.dropLast())).objectValue)
        #expect(mineObject["all"] == nil)
    }

    // MARK: Events

    static let report = JSONObject([
        .init(key: "version", value: .string("1.0.0")),
        .init(key: "uptimeSeconds", value: .number("3600")),
        .init(key: "store", value: .object(JSONObject([.init(key: "kind", value: .string("sqlite")), .init(key: "ok", value: .bool(true))]))),
        .init(key: "rates", value: .array([.object(JSONObject([.init(key: "action", value: .string("signup")), .init(key: "last1", value: .number("2"))]))])),
        .init(key: "paused", value: .null),
        .init(key: "hashP50", value: .number("0.045")),
    ])

    static let events: [ServerEvent] = [
        .status(report: report, id: .integer(1)),
        .status(report: JSONObject(), id: nil),
        .signups(SignupsState(paused: false), id: nil),
        .signups(SignupsState(paused: true, message: "back at noon \"UTC\"", since: 1_790_000_000, byUID: 0), id: .string("s")),
        .signups(SignupsState(paused: true, message: nil, since: 1_790_000_000, byUID: 1000), id: .integer(3)),
        .sessionList(sessions: [
            SessionSummary(session: "a", form: "signup", ageSeconds: 3, views: 1, uid: 1000),
            SessionSummary(session: "b", form: "login", ageSeconds: 70, views: 0, detachedSeconds: 12, uid: 33, client: "browser-1"),
            SessionSummary(session: "c", form: "signup", ageSeconds: 1, views: 2),
        ], id: .integer(2)),
    ]

    @Test("each encodes to one line of JSON and decodes back equal", arguments: events)
    func eventRoundTrip(_ event: ServerEvent) throws {
        let line = event.line
        #expect(line.last == 0x0A)
        #expect(!line.dropLast().contains(0x0A))
        let object = try #require(try JSONParser.parse(Array(line.dropLast())).objectValue)
        #expect(object["event"]?.stringValue != nil)
        #expect(try ServerEvent.decode(line: Array(line.dropLast())) == event)
    }

    @Test("status: the report's members sit beside event and id")
    func statusMembers() throws {
        let line = ServerEvent.status(report: Self.report, id: .integer(7)).line
        let object = try #require(try JSONParser.parse(Array(line.dropLast())).objectValue)
        #expect(object["event"] == .string("status"))
        #expect(object["id"] == .number("7"))
        #expect(object["version"] == .string("1.0.0"))
        #expect(object["store"]?.objectValue?["kind"] == .string("sqlite"))
        #expect(object.members.count == Self.report.members.count + 2)
    }

    @Test("signups: paused, message, since and byUid as sent")
    func signupsMembers() throws {
        let line = ServerEvent.signups(SignupsState(paused: true, message: "m", since: 5, byUID: 0), id: nil).line
        let object = try #require(try JSONParser.parse(Array(line.dropLast())).objectValue)
        #expect(object["event"] == .string("signups"))
        #expect(object["paused"] == .bool(true))
        #expect(object["message"] == .string("m"))
        #expect(object["since"] == .number("5"))
        #expect(object["byUid"] == .number("0"))
        let resumed = try #require(try JSONParser.parse(Array(ServerEvent.signups(SignupsState(paused: false), id: nil).line.dropLast())).objectValue)
        #expect(resumed["paused"] == .bool(false))
        #expect(resumed["message"] == nil && resumed["since"] == nil && resumed["byUid"] == nil)
    }

    @Test("a session summary names its owner only when it has one")
    func summaryOwner() throws {
        let line = ServerEvent.sessionList(sessions: [
            SessionSummary(session: "b", form: "login", ageSeconds: 70, views: 0, uid: 33, client: "browser-1"),
            SessionSummary(session: "c", form: "signup", ageSeconds: 1, views: 2),
        ], id: nil).line
        let object = try #require(try JSONParser.parse(Array(line.dropLast())).objectValue)
        let array = try #require(object["sessions"]?.arrayValue)
        let sessions = array.compactMap(\.objectValue)
        #expect(sessions.count == 2)
        #expect(sessions[0]["uid"] == .number("33"))
        #expect(sessions[0]["client"] == .string("browser-1"))
        #expect(sessions[1]["uid"] == nil)
        #expect(sessions[1]["client"] == nil)
    }

    @Test("a signups event without paused is malformed")
    func signupsNeedsPaused() {
        #expect(throws: (any Error).self) { try ServerEvent.decode(line: Array(#"{"event":"signups","message":"m"}"#.utf8)) }
    }
}
