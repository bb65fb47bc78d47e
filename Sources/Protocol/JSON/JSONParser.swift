/// Why a byte sequence is not an acceptable JSON document.
public struct JSONParseError: Error, Sendable, Equatable {
    /// The broad kind of failure; `duplicateKey` is well-formed JSON we still refuse.
    public enum Kind: Sendable, Equatable {
        case syntax
        case invalidUTF8
        case tooDeep
        case duplicateKey
    }

    public var kind: Kind
    public var message: String
    /// Byte offset in the input where the problem was found.
    public var offset: Int
}

/// A strict RFC 8259 parser over UTF-8 bytes: no comments, no trailing commas, no NaN,
/// no leading zeros, no raw control characters in strings, no invalid UTF-8, one value
/// per document, bounded nesting, and no duplicate keys.
public struct JSONParser: ~Copyable {
    /// Deepest nesting of arrays and objects accepted.
    public static let defaultMaxDepth = 32

    private let bytes: UnsafeRawBufferPointer
    private var index = 0
    private let maxDepth: Int
    /// Whether a member name given twice in one object is an error (`duplicateKey`), as it
    /// is for every request; when not, both are kept, in order.
    private let rejectsDuplicates: Bool

    private init(bytes: UnsafeRawBufferPointer, maxDepth: Int, rejectsDuplicates: Bool) {
        self.bytes = bytes
        self.maxDepth = maxDepth
        self.rejectsDuplicates = rejectsDuplicates
    }

    /// Parses one complete JSON document. With `rejectsDuplicates` false, an object that
    /// names a member twice keeps both (only to read what else a refused request said).
    public static func parse(
        _ bytes: UnsafeRawBufferPointer,
        maxDepth: Int = defaultMaxDepth,
        rejectsDuplicates: Bool = true
    ) throws(JSONParseError) -> JSONValue {
        var parser = JSONParser(bytes: bytes, maxDepth: maxDepth, rejectsDuplicates: rejectsDuplicates)
        parser.skipWhitespace()
        let value = try parser.parseValue(depth: 0)
        parser.skipWhitespace()
        if parser.index != bytes.count {
            throw parser.error(.syntax, "unexpected data after the JSON value")
        }
        return value
    }

    /// Parses one complete JSON document held in an array.
    public static func parse(_ bytes: [UInt8], maxDepth: Int = defaultMaxDepth) throws(JSONParseError) -> JSONValue {
        let result: Result<JSONValue, JSONParseError> = bytes.withUnsafeBytes { raw in
            Result { () throws(JSONParseError) -> JSONValue in try parse(raw, maxDepth: maxDepth) }
        }
        return try result.get()
    }

    private func error(_ kind: JSONParseError.Kind, _ message: String) -> JSONParseError {
        JSONParseError(kind: kind, message: message, offset: index)
    }

    private var current: UInt8? { index < bytes.count ? bytes[index] : nil }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    private mutating func parseValue(depth: Int) throws(JSONParseError) -> JSONValue {
        guard let byte = current else { throw error(.syntax, "unexpected end of input") }
        switch byte {
        case UInt8(ascii: "{"): return try parseObject(depth: depth + 1)
        case UInt8(ascii: "["): return try parseArray(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try expectLiteral("true"); return .bool(true)
        case UInt8(ascii: "f"): try expectLiteral("false"); return .bool(false)
        case UInt8(ascii: "n"): try expectLiteral("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try parseNumber())
        case 0x00: throw error(.syntax, "NUL byte outside a string")
        case 0x80...: throw error(.syntax, "unexpected non-ASCII byte")
        default: throw error(.syntax, "unexpected character '\(Character(Unicode.Scalar(byte)))'")
        }
    }

    private mutating func expectLiteral(_ literal: StaticString) throws(JSONParseError) {
        let count = literal.utf8CodeUnitCount
        guard index + count <= bytes.count else { throw error(.syntax, "unexpected end of input") }
        let start = literal.utf8Start
        for offset in 0..<count where bytes[index + offset] != start[offset] {
            throw error(.syntax, "invalid literal")
        }
        index += count
    }

    private mutating func parseObject(depth: Int) throws(JSONParseError) -> JSONValue {
        guard depth <= maxDepth else { throw error(.tooDeep, "nesting deeper than \(maxDepth) levels") }
        index += 1
        var members: [JSONObject.Member] = []
        var seen: Set<[UInt8]> = []
        skipWhitespace()
        if current == UInt8(ascii: "}") {
            index += 1
            return .object(JSONObject(members))
        }
        // Room for a request's members at once: grown from empty, three members took three allocations.
        members.reserveCapacity(4)
        while true {
            skipWhitespace()
            guard current == UInt8(ascii: "\"") else { throw error(.syntax, "expected a member name") }
            let keyOffset = index
            let key = try parseName()
            // A linear scan is fastest for the handful of members a request has; past that,
            // a set keeps a hostile object with thousands of members from costing O(n²).
            // Names are the same when their code points are (RFC 8259), not when Swift's
            // String == calls them equal: K and the Kelvin sign K are two names (helper-41).
            if !rejectsDuplicates {
                // Both kept.
            } else if members.count < 8 {
                for member in members where member.key.hasSameUTF8(as: key) {
                    throw JSONParseError(kind: .duplicateKey, message: "duplicate member \"\(key)\"", offset: keyOffset)
                }
            } else {
                if seen.isEmpty { seen = Set(members.map { Array($0.key.utf8) }) }
                guard seen.insert(Array(key.utf8)).inserted else {
                    throw JSONParseError(kind: .duplicateKey, message: "duplicate member \"\(key)\"", offset: keyOffset)
                }
            }
            skipWhitespace()
            guard current == UInt8(ascii: ":") else { throw error(.syntax, "expected ':' after a member name") }
            index += 1
            skipWhitespace()
            let value = try parseValue(depth: depth)
            members.append(JSONObject.Member(key: key, value: value))
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "}"): index += 1; return .object(JSONObject(members))
            case nil: throw error(.syntax, "unexpected end of input in an object")
            default: throw error(.syntax, "expected ',' or '}' in an object")
            }
        }
    }

    private mutating func parseArray(depth: Int) throws(JSONParseError) -> JSONValue {
        guard depth <= maxDepth else { throw error(.tooDeep, "nesting deeper than \(maxDepth) levels") }
        index += 1
        var elements: [JSONValue] = []
        skipWhitespace()
        if current == UInt8(ascii: "]") {
            index += 1
            return .array(elements)
        }
        while true {
            skipWhitespace()
            elements.append(try parseValue(depth: depth))
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "]"): index += 1; return .array(elements)
            case nil: throw error(.syntax, "unexpected end of input in an array")
            default: throw error(.syntax, "expected ',' or ']' in an array")
            }
        }
    }

    private mutating func parseNumber() throws(JSONParseError) -> String {
        let start = index
        if current == UInt8(ascii: "-") { index += 1 }
        guard let first = current, isDigit(first) else { throw error(.syntax, "invalid number") }
        if first == UInt8(ascii: "0") {
            index += 1
            if let next = current, isDigit(next) { throw error(.syntax, "leading zero in a number") }
        } else {
            skipDigits()
        }
        if current == UInt8(ascii: ".") {
            index += 1
            guard let next = current, isDigit(next) else { throw error(.syntax, "invalid fraction") }
            skipDigits()
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            index += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
            guard let next = current, isDigit(next) else { throw error(.syntax, "invalid exponent") }
            skipDigits()
        }
        // Only ASCII digits and signs were consumed, so this is always valid UTF-8.
        return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
    }

    private func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    private mutating func skipDigits() {
        while let byte = current, isDigit(byte) { index += 1 }
    }

    private mutating func parseString() throws(JSONParseError) -> String {
        index += 1  // opening quote
        let start = index
        // Fast path: no escapes. Scan to the closing quote, then validate UTF-8 once.
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let raw = UnsafeRawBufferPointer(rebasing: bytes[start..<index])
                index += 1
                return try Self.makeString(raw, at: start)
            }
            if byte == UInt8(ascii: "\\") { return try parseEscapedString(from: start) }
            if byte < 0x20 { throw error(.syntax, "raw control character in a string") }
            index += 1
        }
        throw error(.syntax, "unterminated string")
    }

    /// A member name: one the protocol uses (`knownNames`), written without escapes, is
    /// that same `String` every time, not a new one validated and copied (three a request:
    /// issue 29's profile); any other name is read as any string.
    private mutating func parseName() throws(JSONParseError) -> String {
        let start = index + 1
        var end = start
        while end < bytes.count, bytes[end] != UInt8(ascii: "\""), bytes[end] != UInt8(ascii: "\\"), bytes[end] >= 0x20 { end += 1 }
        if end < bytes.count, bytes[end] == UInt8(ascii: "\""), let known = Self.knownName(UnsafeRawBufferPointer(rebasing: bytes[start..<end])) {
            index = end + 1
            return known
        }
        return try parseString()
    }

    /// The member names of requests and of the events answering keystrokes.
    private static let knownNames: [String] = [
        "op", "id", "session", "field", "value", "form", "locale", "event", "seq", "state", "message", "messageId", "params",
    ]

    private static func knownName(_ raw: UnsafeRawBufferPointer) -> String? {
        for name in knownNames where name.utf8.count == raw.count {
            let same = name.utf8.withContiguousStorageIfAvailable { mine in
                for offset in 0..<raw.count where mine[offset] != raw[offset] { return false }
                return true
            }
            if same == true { return name }
        }
        return nil
    }

    private static func makeString(_ raw: UnsafeRawBufferPointer, at offset: Int) throws(JSONParseError) -> String {
        guard let string = UTF8Validation.string(raw) else {
            throw JSONParseError(kind: .invalidUTF8, message: "invalid UTF-8 in a string", offset: offset)
        }
        return string
    }

    private mutating func parseEscapedString(from start: Int) throws(JSONParseError) -> String {
        var utf8: [UInt8] = Array(UnsafeRawBufferPointer(rebasing: bytes[start..<index]))
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                let result: Result<String, JSONParseError> = utf8.withUnsafeBytes { raw in
                    Result { () throws(JSONParseError) -> String in try Self.makeString(raw, at: start) }
                }
                return try result.get()
            case UInt8(ascii: "\\"):
                index += 1
                guard let escape = current else { throw error(.syntax, "unterminated escape") }
                index += 1
                switch escape {
                case UInt8(ascii: "\""): utf8.append(0x22)
                case UInt8(ascii: "\\"): utf8.append(0x5C)
                case UInt8(ascii: "/"): utf8.append(0x2F)
                case UInt8(ascii: "b"): utf8.append(0x08)
                case UInt8(ascii: "f"): utf8.append(0x0C)
                case UInt8(ascii: "n"): utf8.append(0x0A)
                case UInt8(ascii: "r"): utf8.append(0x0D)
                case UInt8(ascii: "t"): utf8.append(0x09)
                case UInt8(ascii: "u"): try appendUnicodeEscape(to: &utf8)
                default: throw error(.syntax, "invalid escape sequence")
                }
            case 0..<0x20:
                throw error(.syntax, "raw control character in a string")
            default:
                utf8.append(byte)
                index += 1
            }
        }
        throw error(.syntax, "unterminated string")
    }

    private mutating func readHex4() throws(JSONParseError) -> UInt32 {
        guard index + 4 <= bytes.count else { throw error(.syntax, "truncated \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw error(.syntax, "invalid hex digit in \\u escape")
            }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }

    private mutating func appendUnicodeEscape(to utf8: inout [UInt8]) throws(JSONParseError) {
        var code = try readHex4()
        if (0xD800...0xDBFF).contains(code) {
            guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                throw error(.invalidUTF8, "lone high surrogate in \\u escape")
            }
            index += 2
            let low = try readHex4()
            guard (0xDC00...0xDFFF).contains(low) else { throw error(.invalidUTF8, "invalid low surrogate in \\u escape") }
            code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
        } else if (0xDC00...0xDFFF).contains(code) {
            throw error(.invalidUTF8, "lone low surrogate in \\u escape")
        }
        guard let scalar = Unicode.Scalar(code) else { throw error(.invalidUTF8, "invalid code point") }
        utf8.append(contentsOf: UTF8.encode(scalar)!)
    }
}
