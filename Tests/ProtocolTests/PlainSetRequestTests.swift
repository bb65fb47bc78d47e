@testable import SignupProtocol
import Testing

/// A plain `set` read straight from its bytes must be exactly what the general path reads,
/// and every other line must get the general path's answer or refusal, word for word.
@Suite("Plain set requests")
struct PlainSetRequestTests {
    private func outcome(_ line: [UInt8], inFull: Bool) -> Result<Request, RequestError> {
        line.withUnsafeBytes { raw in
            Result { () throws(RequestError) -> Request in
                inFull ? try Request.decodeInFull(line: raw) : try Request.decode(line: raw)
            }
        }
    }

    private func plain(_ text: String) -> Request? {
        Array(text.utf8).withUnsafeBytes { PlainSetRequest.read($0) }
    }

    private func expectSame(_ line: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) {
        let fast = outcome(line, inFull: false)
        let full = outcome(line, inFull: true)
        #expect(fast == full, "\(String(decoding: line, as: UTF8.self).debugDescription)", sourceLocation: sourceLocation)
    }

    @Test("the usual keystrokes are read straight from their bytes", arguments: [
        (#"{"op":"set","field":"password","value":"hunter2"}"#, Request(.set(session: nil, field: "password", value: "hunter2"))),
        (#"{"op":"set","session":"s-1","field":"username","value":"zoë","id":7}"#, Request(id: .integer(7), .set(session: "s-1", field: "username", value: "zoë"))),
        (#" { "id" : "k1" , "value" : "" , "field" : "f" , "op" : "set" } "#, Request(id: .string("k1"), .set(session: nil, field: "f", value: ""))),
        ("{\"op\":\"set\",\t\"field\":\"a\",\r\"value\":\"密码\",\"id\":-9223372036854775808}", Request(id: .integer(.min), .set(session: nil, field: "a", value: "密码"))),
        (#"{"op":"set","field":"a","value":"b","id":-0}"#, Request(id: .integer(0), .set(session: nil, field: "a", value: "b"))),
        (#"{"op":"set","field":"a","value":"b","id":9223372036854775807}"#, Request(id: .integer(.max), .set(session: nil, field: "a", value: "b"))),
    ])
    func plainSets(line: String, request: Request) {
        #expect(plain(line) == request)
        expectSame(Array(line.utf8))
    }

    @Test("anything else is left to the general path", arguments: [
        #"{"op":"set","field":"a","value":"b\"c"}"#,  // an escape
        #"{"op":"set","field":"a","value":"b","extra":1}"#,  // another member
        #"{"op":"set","field":"a","value":"b","session":null}"#,  // null
        #"{"op":"set","field":"a","value":"b","session":""}"#,  // an empty session: a refusal
        #"{"op":"set","field":"a","value":"b","id":1.0}"#,
        #"{"op":"set","field":"a","value":"b","id":1e3}"#,
        #"{"op":"set","field":"a","value":"b","id":01}"#,
        #"{"op":"set","field":"a","value":"b","id":9223372036854775808}"#,
        #"{"op":"set","field":"a","value":"b","id":-9223372036854775809}"#,
        #"{"op":"set","field":"a","value":"b","id":99999999999999999999}"#,
        #"{"op":"set","field":"a","value":"b","op":"set"}"#,  // a duplicate
        #"{"op":"set","field":"a"}"#,  // no value
        #"{"op":"set","value":"b"}"#,  // no field
        #"{"field":"a","value":"b"}"#,  // no op
        #"{"op":"submit","field":"a","value":"b"}"#,
        #"{"op":"set","field":"a","value":"b"} x"#,
        #"{"op":"set","field":"a","value":"b",}"#,
        #"{"op":"set","field":"a","value":"b""#,
        #"{"op":"set","field":5,"value":"b"}"#,
        #"{"op":"set","field":"a","value":"b","id":-}"#,
        #"[{"op":"set","field":"a","value":"b"}]"#,
    ])
    func notPlain(line: String) {
        #expect(plain(line) == nil)
        expectSame(Array(line.utf8))
    }

    @Test("invalid UTF-8 and control characters are the general path's to refuse")
    func badBytes() {
        for bad: [UInt8] in [[0xFF], [0xC0, 0x80], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0x01], [0x1F], [0x0A], [0xE2, 0x82]] {
            for member in ["field", "value", "session", "id", "op"] {
                let line = Array(#"{"op":"set","field":"a","value":"b","\#(member)":""#.utf8) + bad + Array(#""}"#.utf8)
                expectSame(line)
                #expect(line.withUnsafeBytes { PlainSetRequest.read($0) } == nil)
            }
        }
    }

    /// Lines made of the pieces requests are made of (and of their faults), then mutated
    /// byte by byte: the fast and the general path must answer each the same.
    @Test("generated and mutated lines read the same both ways")
    func generated() {
        var random = SplitMix64(seed: 0x5E7)
        let names = ["op", "id", "session", "field", "value", "locale", "op", "field", "value", "Op", "i\\u0064", "valu", "values"]
        let values = [
            #""set""#, #""set""#, #""submit""#, #""s-1""#, #""""#, #""password""#, #""zoë 密码""#, #""a\"b""#, #""\u0041""#,
            "7", "-3", "0", "-0", "01", "1.5", "2e3", "-", "9223372036854775807", "9223372036854775808", "-9223372036854775808",
            "null", "true", "false", "[]", "{}", #"{"a":1}"#, #"["set"]"#, "\"x\u{7F}y\"", "\"tab\there\"",
        ]
        let spaces = ["", "", "", " ", "\t", "\r\n", "  "]
        var checked = 0
        var plainCount = 0
        for _ in 0..<4_000 {
            var members: [String] = []
            // Mostly a well-formed set, so that mutations land near the fast path's edges.
            if random.below(3) > 0 {
                members = [#""op":"set""#, #""field":"password""#, #""value":"p\#(random.below(1000))""#]
                if random.below(2) == 0 { members.append(#""session":"s-\#(random.below(9))""#) }
                if random.below(2) == 0 { members.append(#""id":\#(random.below(2) == 0 ? String(random.below(100_000)) : "\"k\(random.below(9))\"")"#) }
                members.shuffle(using: &random)
            }
            for _ in 0..<(random.below(3) == 0 ? 1 + random.below(2) : 0) {
                members.insert("\"\(names[random.below(names.count)])\":\(values[random.below(values.count)])", at: random.below(members.count + 1))
            }
            let space = spaces[random.below(spaces.count)]
            let text = space + "{" + members.joined(separator: "," + space) + space + "}" + (random.below(10) == 0 ? "," : "")
            var line = Array(text.utf8)
            for mutation in 0...2 {
                if line.withUnsafeBytes({ PlainSetRequest.read($0) }) != nil { plainCount += 1 }
                expectSame(line)
                checked += 1
                guard !line.isEmpty, mutation < 2 else { break }
                let at = random.below(line.count)
                switch random.below(4) {
                case 0: line.remove(at: at)
                case 1: line.insert([0x22, 0x5C, 0x2C, 0x3A, 0x7D, 0x30, 0x2D, 0x20, 0xC3, 0x80][random.below(10)], at: at)
                case 2: line[at] = UInt8(truncatingIfNeeded: random.next())
                default: line.insert(contentsOf: line[at...].prefix(random.below(6)), at: at)
                }
            }
        }
        #expect(checked > 9_000)
        // The generator must reach the fast path often, or it tests only the general one.
        #expect(plainCount > 2_000)
    }
}

/// A seeded generator (SplitMix64): the same lines on every run.
private struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }
}
