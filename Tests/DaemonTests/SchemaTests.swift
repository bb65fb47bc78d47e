import SignupProtocol
import Testing

@Suite("The published JSON Schema")
struct SchemaTests {
    @Test("it accepts what the daemon sends and rejects what it must not")
    func validatorCanFail() throws {
        let schema = SchemaValidator.protocolV1
        let good = try JSONParser.parse(Array(#"{"event":"validation","session":"s","seq":1,"field":"f","state":"ok","message":"","messageId":"","params":{}}"#.utf8))
        #expect(schema.problems(good).isEmpty)
        let withParams = try JSONParser.parse(Array(#"{"event":"validation","session":"s","seq":1,"field":"f","state":"failed","message":"m","messageId":"username.too_long","params":{"max":39}}"#.utf8))
        #expect(schema.problems(withParams).isEmpty)
        for bad in [
            #"{"event":"validation","session":"s","seq":0,"field":"f","state":"ok","message":""}"#,
            #"{"event":"validation","session":"s","seq":1,"field":"f","state":"great","message":""}"#,
            #"{"event":"error","code":"oops","message":"m"}"#,
            #"{"event":"pong","extra":1}"#,
            #"{"event":"result","session":"s","seq":2,"ok":true,"message":"m","token":"short"}"#,
            #"{"event":"hello"}"#,
            #"{"event":"validation","session":"s","seq":1,"field":"f","state":"ok","message":"","messageId":"Not An Id","params":{}}"#,
            #"{"event":"locale","session":"s","locale":"not a tag"}"#,
        ] {
            #expect(!schema.problems(try JSONParser.parse(Array(bad.utf8))).isEmpty, "accepted \(bad)")
        }
    }

    @Test("every error code of the protocol is in the schema", arguments: ErrorCode.allCases)
    func errorCodes(_ code: ErrorCode) throws {
        let event = ServerEvent.error(code: code, message: "m", session: nil, id: nil)
        #expect(SchemaValidator.protocolV1.problems(try JSONParser.parse(Array(event.line.dropLast()))).isEmpty)
    }

    @Test("requests the client library encodes validate as requests")
    func requests() throws {
        let requests: [Request] = [
            Request(id: .integer(1), .describe(locale: nil)), Request(.ping), Request(.open(form: "signup", locale: nil)), Request(.attach(session: "s")),
            Request(.set(session: nil, field: "f", value: "v")), Request(.submit(session: "s")), Request(.snapshot(session: nil)),
            Request(.close(session: nil)), Request(.verify(token: "t")), Request(id: .string("l"), .sessions()),
            Request(.sessions(SessionsPage(limit: 500, after: "1234-00ab"))), Request(.allSessions(SessionsPage(limit: 1))),
        ]
        for request in requests {
            var writer = JSONWriter()
            request.encode(into: &writer)
            let value = try JSONParser.parse(Array(writer.bytes.dropLast()))
            #expect(SchemaValidator.protocolV1.problems(value, against: "#/$defs/request").isEmpty)
        }
    }
}
