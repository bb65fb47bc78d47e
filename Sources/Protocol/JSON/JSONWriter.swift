/// Writes one compact JSON object into a byte buffer, members in the order they are
/// added. Strings are escaped so that the output never holds a raw newline: one object
/// is always exactly one NDJSON line.
public struct JSONWriter: Sendable {
    /// The bytes written so far (a copy: `withBytes` lends them without one).
    public var bytes: [UInt8] { store.bytes }
    /// How many bytes are written.
    public var byteCount: Int { store.count }
    /// The storage held for writing, used or not.
    public var capacity: Int { store.capacity }
    private var store: ByteStore
    /// Which open containers have an element already (the next one needs a comma): one bit
    /// per level for the first 64, an array past them. It was an array of flags, whose
    /// uniqueness checks and bounds on every member were a tenth of encoding an event.
    private var commas = CommaStack()

    public init(reservingCapacity capacity: Int = 128) {
        store = ByteStore(capacity: capacity)
    }

    /// Clears the output but keeps its storage, so a writer can be reused per message.
    public mutating func reset() {
        store.removeAll()
        commas = CommaStack()
    }

    public mutating func beginObject() {
        separate()
        store.append(UInt8(ascii: "{"))
        commas.push()
    }

    public mutating func endObject() {
        store.append(UInt8(ascii: "}"))
        commas.pop()
        markWritten()
    }

    public mutating func beginArray(_ key: String) {
        self.key(key)
        store.append(UInt8(ascii: "["))
        commas.push()
    }

    public mutating func endArray() {
        store.append(UInt8(ascii: "]"))
        commas.pop()
        markWritten()
    }

    /// Starts a member whose value the next call writes.
    public mutating func key(_ key: String) {
        separate()
        appendQuoted(key)
        store.append(UInt8(ascii: ":"))
        // The value that follows must not be preceded by a comma.
        commas.setTop(false)
    }

    public mutating func member(_ key: String, _ value: String) {
        self.key(key)
        appendQuoted(value)
        markWritten()
    }

    public mutating func member(_ key: String, _ value: Bool) {
        self.key(key)
        fixed(value ? "true" : "false")
        markWritten()
    }

    public mutating func member(_ key: String, _ value: Int) {
        self.key(key)
        appendInteger(Int64(value))
        markWritten()
    }

    public mutating func member(_ key: String, _ value: UInt64) {
        self.key(key)
        unsigned(value)
        markWritten()
    }

    public mutating func member(_ key: String, _ value: RequestID) {
        self.key(key)
        switch value {
        case .string(let s): appendQuoted(s)
        case .integer(let i): appendInteger(i)
        }
        markWritten()
    }

    /// Appends a string element to the array being written.
    public mutating func element(_ value: String) {
        separate()
        appendQuoted(value)
        markWritten()
    }

    /// Writes any JSON value: the whole output, an element of the array being written, or
    /// the value of the member `key(_:)` began. Numbers keep their literal text.
    public mutating func value(_ value: JSONValue) {
        switch value {
        case .string(let text): element(text)
        case .null, .bool, .number:
            separate()
            switch value {
            case .bool(let flag): fixed(flag ? "true" : "false")
            case .number(let literal):
                var literal = literal
                literal.withUTF8 { store.append($0) }
            default: fixed("null")
            }
            markWritten()
        case .array(let items):
            separate()
            store.append(UInt8(ascii: "["))
            commas.push()
            for item in items { self.value(item) }
            endArray()
        case .object(let object):
            beginObject()
            for member in object.members {
                key(member.key)
                self.value(member.value)
            }
            endObject()
        }
    }

    /// The bytes written so far, lent without a copy.
    public func withBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try store.withBytes(body)
    }

    /// Appends the finished object's terminating newline.
    public mutating func endLine() {
        store.append(0x0A)
    }

    // MARK: Fixed text

    /// Appends JSON written out in the source as it is (`,"seq":`): an event sent on every
    /// keystroke is mostly fixed text between a few values (`ServerEvent`'s session events).
    /// A value written so begins with `beginFixed` (a comma first if it needs one) and ends
    /// with `endFixed`; what comes between must make it valid JSON.
    @inline(__always)
    mutating func fixed(_ json: StaticString) {
        json.withUTF8Buffer { store.append($0) }
    }

    mutating func beginFixed(_ json: StaticString) {
        separate()
        fixed(json)
    }

    mutating func endFixed(_ json: StaticString) {
        fixed(json)
        markWritten()
    }

    /// A string value between fixed text, quoted and escaped.
    mutating func quoted(_ string: String) {
        appendQuoted(string)
    }

    /// A number between fixed text.
    mutating func integer(_ value: Int64) {
        appendInteger(value)
    }

    mutating func unsigned(_ value: UInt64) {
        if value < 10 {
            store.append(UInt8(ascii: "0") + UInt8(value))
            return
        }
        // At most 20 digits, written from the end.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var rest = value
            var start = 20
            while rest > 0 {
                start -= 1
                digits[start] = UInt8(ascii: "0") + UInt8(rest % 10)
                rest /= 10
            }
            store.append(UnsafeBufferPointer(rebasing: digits[start...]))
        }
    }

    private mutating func separate() {
        if commas.setTop(true) { store.append(UInt8(ascii: ",")) }
    }

    private mutating func markWritten() {
        commas.setTop(true)
    }

    private mutating func appendInteger(_ value: Int64) {
        if value < 0 { store.append(UInt8(ascii: "-")) }
        unsigned(value.magnitude)
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    private mutating func appendQuoted(_ string: String) {
        var string = string
        string.withUTF8 { utf8 in
            store.append(UInt8(ascii: "\""))
            // Fast path: nothing to escape (almost every string), so copy the bytes at once.
            if !Self.anyNeedsEscape(utf8) {
                store.append(utf8)
            } else {
                for byte in utf8 { appendEscaped(byte) }
            }
            store.append(UInt8(ascii: "\""))
        }
    }

    /// Whether any byte needs an escape (`needsEscape`), eight bytes at a time: a byte at a
    /// time was half of writing a keystroke's answer (issue 29). Exact, for any bytes: a
    /// byte of 0x80 or more is never taken for one below 0x20 or equal to the four.
    private static func anyNeedsEscape(_ utf8: UnsafeBufferPointer<UInt8>) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        /// Whether a byte of `word` is zero.
        func hasZero(_ word: UInt64) -> Bool { (word &- ones) & ~word & highs != 0 }
        var index = 0
        if let base = UnsafeRawPointer(utf8.baseAddress) {
            while index + 8 <= utf8.count {
                let word = base.loadUnaligned(fromByteOffset: index, as: UInt64.self)
                // Below 0x20, a quote, a backslash, DEL.
                if (word &- ones &* 0x20) & ~word & highs != 0 || hasZero(word ^ (ones &* 0x22)) || hasZero(word ^ (ones &* 0x5C))
                    || hasZero(word ^ (ones &* 0x7F))
                {
                    return true
                }
                index += 8
            }
        }
        while index < utf8.count {
            if needsEscape(utf8[index]) { return true }
            index += 1
        }
        return false
    }

    private static func needsEscape(_ byte: UInt8) -> Bool {
        byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte == 0x7F
    }

    private mutating func appendEscaped(_ byte: UInt8) {
        switch byte {
        case UInt8(ascii: "\""): store.append(UInt8(ascii: "\\")); store.append(UInt8(ascii: "\""))
        case UInt8(ascii: "\\"): store.append(UInt8(ascii: "\\")); store.append(UInt8(ascii: "\\"))
        case 0x0A: store.append(UInt8(ascii: "\\")); store.append(UInt8(ascii: "n"))
        case 0x0D: store.append(UInt8(ascii: "\\")); store.append(UInt8(ascii: "r"))
        case 0x09: store.append(UInt8(ascii: "\\")); store.append(UInt8(ascii: "t"))
        case 0..<0x20, 0x7F:
            fixed("\\u00")
            store.append(Self.hexDigits[Int(byte >> 4)])
            store.append(Self.hexDigits[Int(byte & 0xF)])
        default: store.append(byte)
        }
    }
}

/// Whether each open container of a `JSONWriter` has an element: a bit per level for the
/// first 64 levels, an array past them (only a deep `value` goes there).
private struct CommaStack: Sendable {
    private var depth = 0
    private var bits: UInt64 = 0
    private var deeper: [Bool] = []

    /// Opens a container, with no element yet.
    mutating func push() {
        if depth < 64 { bits &= ~(1 << UInt64(depth)) } else { deeper.append(false) }
        depth += 1
    }

    mutating func pop() {
        depth -= 1
        if depth >= 64 { deeper.removeLast() }
    }

    /// Sets the innermost container's flag and returns what it was (false outside any).
    @discardableResult
    mutating func setTop(_ value: Bool) -> Bool {
        guard depth > 0 else { return false }
        let level = depth - 1
        if level < 64 {
            let bit: UInt64 = 1 << UInt64(level)
            let was = bits & bit != 0
            if value { bits |= bit } else { bits &= ~bit }
            return was
        }
        let was = deeper[level - 64]
        deeper[level - 64] = value
        return was
    }
}
