/// A keystroke's request read straight from its bytes: `{"op":"set", …}` with only `op`,
/// `id`, `session`, `field` and `value`, each once, strings without escapes and an integer
/// or string id. Nearly every request is one of these (issue 29's profile: reading a line
/// as a JSON tree and then the request from it was the largest step of a keystroke).
///
/// It answers only when the general path (`Request.decodeInFull`) would answer the same
/// request; anything else — another op, another member, an escape, `null`, a number that
/// is not a plain integer, invalid UTF-8, bad syntax, a duplicate, an empty session — is
/// left to the general path (nil), which gives the answer or the refusal as it always did.
/// The differential tests (`PlainSetRequestTests`) and the fuzz target hold the two to it.
struct PlainSetRequest: ~Copyable {
    private let bytes: UnsafeRawBufferPointer
    private var index = 0

    private init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    /// The request, or nil when the line is not a plain `set` (the general path decides).
    static func read(_ bytes: UnsafeRawBufferPointer) -> Request? {
        var reader = PlainSetRequest(bytes)
        return reader.request()
    }

    /// The members it reads, one bit each.
    private enum Member: UInt8 {
        case op = 1, id = 2, session = 4, field = 8, value = 16
    }

    private mutating func request() -> Request? {
        skipWhitespace()
        guard next(is: UInt8(ascii: "{")) else { return nil }
        var seen: UInt8 = 0
        var isSet = false
        var id: RequestID?
        var session: String?
        var field: String?
        var value: String?
        repeat {
            skipWhitespace()
            guard let member = memberName(), seen & member.rawValue == 0 else { return nil }
            seen |= member.rawValue
            skipWhitespace()
            guard next(is: UInt8(ascii: ":")) else { return nil }
            skipWhitespace()
            switch member {
            case .op:
                guard let op = stringBytes(), Self.packed(op) == 0x74_6573 else { return nil }  // "set"
                isSet = true
            case .id:
                if index < bytes.count, bytes[index] == UInt8(ascii: "\"") {
                    guard let text = string() else { return nil }
                    id = .string(text)
                } else {
                    guard let integer = integer() else { return nil }
                    id = .integer(integer)
                }
            case .session:
                // Empty: a refusal, which the general path words.
                guard let text = string(), !text.isEmpty else { return nil }
                session = text
            case .field:
                guard let text = string() else { return nil }
                field = text
            case .value:
                guard let text = string() else { return nil }
                value = text
            }
            skipWhitespace()
        } while next(is: UInt8(ascii: ","))
        guard next(is: UInt8(ascii: "}")) else { return nil }
        skipWhitespace()
        guard index == bytes.count, isSet, let field, let value else { return nil }
        return Request(id: id, .set(session: session, field: field, value: value))
    }

    /// Consumes `byte` when it is next.
    private mutating func next(is byte: UInt8) -> Bool {
        guard index < bytes.count, bytes[index] == byte else { return false }
        index += 1
        return true
    }

    /// JSON's whitespace, as `JSONParser` skips it.
    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    /// A quoted member name this reader knows, or nil.
    private mutating func memberName() -> Member? {
        guard let name = stringBytes() else { return nil }
        // Compared as one word: a name's bytes are never zero, so the word says its length too
        // (`elementsEqual` over a String's UTF-8 cost a thousand instructions a request).
        switch Self.packed(name) {
        case 0x706F: return .op  // "op", little-endian
        case 0x6469: return .id
        case 0x64_6C65_6966: return .field
        case 0x65_756C_6176: return .value
        case 0x6E_6F69_7373_6573: return .session
        default: return nil
        }
    }

    /// Up to seven bytes as one little-endian word (0 for a longer text).
    private static func packed(_ text: UnsafeRawBufferPointer) -> UInt64 {
        guard text.count < 8 else { return 0 }
        var word: UInt64 = 0
        for offset in 0..<text.count { word |= UInt64(text[offset]) << (8 * offset) }
        return word
    }

    /// The bytes between a pair of quotes, when there is no escape or control character
    /// in between (nothing is decoded: the bytes are the text).
    private mutating func stringBytes() -> UnsafeRawBufferPointer? {
        guard next(is: UInt8(ascii: "\"")) else { return nil }
        let start = index
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                index += 1
                return UnsafeRawBufferPointer(rebasing: bytes[start..<index - 1])
            }
            if byte == UInt8(ascii: "\\") || byte < 0x20 { return nil }
            index += 1
        }
        return nil
    }

    /// A string without escapes, validated as UTF-8.
    private mutating func string() -> String? {
        stringBytes().flatMap(UTF8Validation.string)
    }

    /// An integer written as JSON writes one (no leading zero, fraction or exponent) that
    /// fits in 64 bits, as `Int64(text)` reads it; nil otherwise.
    private mutating func integer() -> Int64? {
        let negative = next(is: UInt8(ascii: "-"))
        let start = index
        var magnitude: UInt64 = 0
        while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") {
            let (times10, over1) = magnitude.multipliedReportingOverflow(by: 10)
            let (sum, over2) = times10.addingReportingOverflow(UInt64(bytes[index] - UInt8(ascii: "0")))
            guard !over1, !over2 else { return nil }
            magnitude = sum
            index += 1
        }
        let digits = index - start
        guard digits > 0, !(digits > 1 && bytes[start] == UInt8(ascii: "0")) else { return nil }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") || bytes[index] | 0x20 == UInt8(ascii: "e") { return nil }
        // −2⁶³ is the one magnitude past Int64.max that fits; its two's complement is itself.
        guard magnitude <= UInt64(Int64.max) + (negative ? 1 : 0) else { return nil }
        return Int64(bitPattern: negative ? 0 &- magnitude : magnitude)
    }
}
