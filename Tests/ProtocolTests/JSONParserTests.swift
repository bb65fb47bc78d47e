import SignupProtocol
import Testing

@Suite("Strict JSON parser")
struct JSONParserTests {
    private func parse(_ text: String) throws(JSONParseError) -> JSONValue {
        try JSONParser.parse(Array(text.utf8))
    }

    @Test("well-formed documents", arguments: [
        (#"{"a":1}"#, JSONValue.object(JSONObject([.init(key: "a", value: .number("1"))]))),
        (#" [true,false,null] "#, .array([.bool(true), .bool(false), .null])),
        (#""é\u00e9\ud83d\ude00\n""#, .string("éé😀\n")),
        (#"-0.5e+10"#, .number("-0.5e+10")),
        ("\t\r\n{}\r", .object(JSONObject())),
    ])
    func accepts(_ text: String, _ expected: JSONValue) throws {
        #expect(try parse(text) == expected)
    }

    @Test("malformed documents are syntax errors", arguments: [
        "", "{", #"{"a":}"#, #"{"a":1,}"#, "[1,]", "01", "1.", "-", "1e", "+1", "NaN", "'a'", #"{"a" 1}"#, "tru", "nul",
        #""\x""#, #""\u12G4""#, "\"a\u{1}\"", "\"unterminated", "{}{}", "[1 2]", "{1:2}", "\u{0}", "//c\n{}",
    ])
    func rejects(_ text: String) {
        #expect(throws: JSONParseError.self) { try parse(text) }
    }

    @Test("invalid UTF-8 and lone surrogates are reported as such", arguments: [
        [0x22, 0xC3, 0x28, 0x22], [0x22, 0xFF, 0x22], [0x22, 0xED, 0xA0, 0x80, 0x22], Array(#""\ud800""#.utf8), Array(#""\udc00x""#.utf8),
    ])
    func invalidUTF8(_ bytes: [UInt8]) {
        #expect { try JSONParser.parse(bytes) } throws: { ($0 as? JSONParseError)?.kind == .invalidUTF8 }
    }

    @Test("non-ASCII bytes outside strings are syntax errors")
    func strayHighByte() {
        #expect { try JSONParser.parse([0x7B, 0xFF, 0x7D]) } throws: { ($0 as? JSONParseError)?.kind == .syntax }
    }

    @Test("nesting is bounded")
    func depth() throws {
        let ok = String(repeating: "[", count: 32) + String(repeating: "]", count: 32)
        #expect(try parse(ok) != .null)
        let deep = String(repeating: "[", count: 100_000)
        #expect { try parse(deep) } throws: { ($0 as? JSONParseError)?.kind == .tooDeep }
    }

    @Test("duplicate keys are refused", arguments: [
        #"{"op":"ping","op":"describe"}"#,
        // A name the protocol uses, escaped once (read as any string) and once not (the known name).
        #"{"op":"ping","\u006fp":"describe"}"#, #"{"\u006fp":"ping","op":"describe"}"#,
        #"{"value":1,"field":2,"valu\u0065":3}"#,
    ])
    func duplicates(_ text: String) {
        #expect { try parse(text) } throws: { ($0 as? JSONParseError)?.kind == .duplicateKey }
    }

    /// Member names are the same when their code points are (RFC 8259): a name in another
    /// normalisation form, or a prefix of a known one, is another name.
    @Test("names compare by code point: known names, escapes, other forms")
    func namesByCodePoint() throws {
        let object = try #require(try parse(#"{"fi\u0065ld":"x","caf\u00e9":1,"cafe\u0301":2,"o":3,"opp":4}"#).objectValue)
        #expect(object["field"] == .string("x"))
        #expect(object["café"] == .number("1"))
        #expect(object["cafe\u{301}"] == .number("2"))
        #expect(object["op"] == nil)
        #expect(object.members.map(\.key) == ["field", "café", "cafe\u{301}", "o", "opp"])
    }

    @Test("huge numbers keep their text")
    func hugeNumber() throws {
        let digits = String(repeating: "9", count: 400)
        #expect(try parse(digits) == .number(digits))
        #expect(try parse(digits).int64Value == nil)
    }
}

@Suite("JSON writer")
struct JSONWriterTests {
    @Test("escapes make one line that parses back to the same string", arguments: [
        "plain", "quote\"back\\slash", "new\nline\r\ttab", "\u{0}\u{1}\u{1f}\u{7f}", "emoji 👍🏽 é", "\u{2028}",
    ])
    func roundTrip(_ value: String) throws {
        var writer = JSONWriter()
        writer.beginObject()
        writer.member("v", value)
        writer.endObject()
        #expect(!writer.bytes.contains(0x0A))
        #expect(!writer.bytes.contains(0x0D))
        let parsed = try JSONParser.parse(writer.bytes)
        #expect(parsed.objectValue?["v"] == .string(value))
    }

    @Test("output grows past its room from any start, is lent as it is copied, and a reset keeps the room", arguments: [0, 1, 16, 512])
    func growth(_ capacity: Int) throws {
        var writer = JSONWriter(reservingCapacity: capacity)
        var expected = "["
        writer.beginArray("list")
        for index in 0..<300 {
            let text = String(repeating: "é\"x", count: index % 7) + String(index)
            writer.element(text)
            expected += (index > 0 ? "," : "") + "\"" + text.split(separator: "\"", omittingEmptySubsequences: false).joined(separator: "\\\"") + "\""
        }
        writer.endArray()
        #expect(String(decoding: writer.bytes, as: UTF8.self) == "\"list\":" + expected + "]")
        #expect(writer.byteCount == writer.bytes.count && writer.capacity >= writer.byteCount)
        #expect(writer.withBytes { Array($0) } == writer.bytes)
        let room = writer.capacity
        writer.reset()
        #expect(writer.bytes.isEmpty && writer.byteCount == 0 && writer.capacity == room)
        writer.beginObject()
        writer.member("a", true)
        writer.key("b")
        writer.value(.null)
        writer.endObject()
        #expect(String(decoding: writer.bytes, as: UTF8.self) == #"{"a":true,"b":null}"#)
    }
}

@Suite("Parser cost on hostile objects")
struct JSONParserScalingTests {
    @Test("duplicate detection still works past the linear-scan threshold", arguments: [3, 8, 9, 500])
    func duplicatesInLargeObjects(_ count: Int) throws {
        let members = (0..<count).map { "\"k\($0)\":\($0)" }
        let unique = "{" + members.joined(separator: ",") + "}"
        #expect(try JSONParser.parse(Array(unique.utf8)).objectValue?.members.count == count)
        let duplicated = "{" + (members + ["\"k\(count / 2)\":0"]).joined(separator: ",") + "}"
        #expect { try JSONParser.parse(Array(duplicated.utf8)) } throws: { ($0 as? JSONParseError)?.kind == .duplicateKey }
    }
}

@Suite("UTF-8 validation")
struct UTF8ValidationTests {
    @Test("agrees with the standard library on valid and invalid sequences", arguments: [
        [0x61], [0xC3, 0xA9], [0xE2, 0x82, 0xAC], [0xF0, 0x9F, 0x98, 0x80], [0xF4, 0x8F, 0xBF, 0xBF], [0xEF, 0xBF, 0xBF],
        [0xC0, 0xAF], [0xC1, 0xBF], [0xE0, 0x80, 0xAF], [0xED, 0xA0, 0x80], [0xF0, 0x80, 0x80, 0xAF], [0xF4, 0x90, 0x80, 0x80],
        [0xF5, 0x80, 0x80, 0x80], [0x80], [0xC3], [0xE2, 0x82], [0xE2, 0x28, 0xA1], [0xFF], Array("ascii only, longer than eight".utf8),
        Array("mixed ascii then é at the end".utf8), [0x61, 0x62, 0x63, 0x64, 0x65, 0x66, 0x67, 0x68, 0xC3],
    ] as [[UInt8]])
    func matchesStandardLibrary(_ bytes: [UInt8]) throws {
        // Wrapped in a JSON string, so the parser's validation is what decides.
        let document = [0x22] + bytes + [0x22]
        let standard = String(validating: bytes, as: UTF8.self)
        let parsed = try? JSONParser.parse(document)
        #expect(parsed?.stringValue == standard)
    }
}
