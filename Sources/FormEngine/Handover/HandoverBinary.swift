/// The primitives of the handover state's binary payload (format version 4): unsigned
/// LEB128 varints, zigzag for signed ones, and byte strings as a varint length and the
/// bytes. JSON through `Codable` made a restart of 10,000 sessions spend most of its time
/// encoding and parsing (issue 29); these write and read in one pass, with no intermediate
/// tree.
struct BinaryWriter {
    private(set) var bytes: [UInt8] = []

    init(capacity: Int = 0) {
        bytes.reserveCapacity(capacity)
    }

    mutating func varint(_ value: UInt64) {
        var value = value
        while value >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        bytes.append(UInt8(value))
    }

    mutating func varint(_ value: Int) { varint(UInt64(UInt(bitPattern: value))) }

    mutating func signed(_ value: Int64) { varint(UInt64(bitPattern: (value << 1) ^ (value >> 63))) }

    mutating func byte(_ value: UInt8) { bytes.append(value) }

    mutating func bool(_ value: Bool) { bytes.append(value ? 1 : 0) }

    mutating func data(_ value: [UInt8]) {
        varint(value.count)
        bytes.append(contentsOf: value)
    }

    mutating func string(_ value: String) {
        var value = value
        value.withUTF8 { utf8 in
            varint(utf8.count)
            bytes.append(contentsOf: utf8)
        }
    }

    /// A presence byte, then the value if there is one.
    mutating func optional<Value>(_ value: Value?, _ write: (inout BinaryWriter, Value) -> Void) {
        guard let value else { return bool(false) }
        bool(true)
        write(&self, value)
    }

    mutating func array<Element>(_ values: [Element], _ write: (inout BinaryWriter, Element) -> Void) {
        varint(values.count)
        for value in values { write(&self, value) }
    }
}

/// Reads what `BinaryWriter` wrote, within `bytes[start..<end]`. Never traps: a read past the
/// end, an overlong varint, a count larger than the bytes left could hold, or text that is
/// not UTF-8 is `HandoverStateError.malformed`, saying what was being read.
struct BinaryReader {
    private let bytes: [UInt8]
    private(set) var position: Int
    let end: Int

    init(_ bytes: [UInt8], from start: Int = 0, to end: Int? = nil) {
        self.bytes = bytes
        position = start
        self.end = end ?? bytes.count
    }

    var atEnd: Bool { position == end }

    mutating func varint(_ what: @autoclosure () -> String) throws(HandoverStateError) -> UInt64 {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while position < end {
            let byte = bytes[position]
            position += 1
            guard shift < 64, shift < 63 || byte <= 1 else { break }
            value |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 { return value }
            shift += 7
        }
        throw .malformed("\(what()): a bad or cut number at byte \(position)")
    }

    mutating func int(_ what: @autoclosure () -> String) throws(HandoverStateError) -> Int {
        let value = try varint(what())
        guard value <= UInt64(Int.max) else { throw .malformed("\(what()): \(value) is out of range") }
        return Int(value)
    }

    mutating func signed(_ what: @autoclosure () -> String) throws(HandoverStateError) -> Int64 {
        let value = try varint(what())
        return Int64(bitPattern: value >> 1) ^ -Int64(bitPattern: value & 1)
    }

    mutating func uint32(_ what: @autoclosure () -> String) throws(HandoverStateError) -> UInt32 {
        let value = try varint(what())
        guard let narrow = UInt32(exactly: value) else { throw .malformed("\(what()): \(value) is out of range") }
        return narrow
    }

    mutating func byte(_ what: @autoclosure () -> String) throws(HandoverStateError) -> UInt8 {
        guard position < end else { throw .malformed("\(what()): cut short") }
        defer { position += 1 }
        return bytes[position]
    }

    mutating func bool(_ what: @autoclosure () -> String) throws(HandoverStateError) -> Bool {
        switch try byte(what()) {
        case 0: false
        case 1: true
        case let other: throw .malformed("\(what()): \(other) is not a flag")
        }
    }

    /// How many elements follow, each at least `minimum` bytes: never more than the rest holds.
    mutating func count(_ what: @autoclosure () -> String, minimum: Int = 1) throws(HandoverStateError) -> Int {
        let count = try int(what())
        guard count <= (end - position) / max(1, minimum) else { throw .malformed("\(what()): \(count) elements do not fit in \(end - position) bytes") }
        return count
    }

    mutating func data(_ what: @autoclosure () -> String) throws(HandoverStateError) -> [UInt8] {
        let range = try span(what())
        return Array(bytes[range])
    }

    /// The bounds of a length-prefixed byte string, skipped over.
    mutating func span(_ what: @autoclosure () -> String) throws(HandoverStateError) -> Range<Int> {
        let count = try self.count(what())
        defer { position += count }
        return position..<(position + count)
    }

    mutating func string(_ what: @autoclosure () -> String) throws(HandoverStateError) -> String {
        let range = try span(what())
        guard let text = bytes.withUnsafeBufferPointer({ String(validating: UnsafeBufferPointer(rebasing: $0[range]), as: UTF8.self) }) else {
            throw .malformed("\(what()) is not UTF-8")
        }
        return text
    }

    mutating func optional<Value>(_ what: @autoclosure () -> String, _ read: (inout BinaryReader) throws(HandoverStateError) -> Value) throws(HandoverStateError) -> Value? {
        try bool(what()) ? try read(&self) : nil
    }

    mutating func array<Element>(_ what: @autoclosure () -> String, _ read: (inout BinaryReader) throws(HandoverStateError) -> Element) throws(HandoverStateError) -> [Element] {
        let count = try self.count(what())
        var values: [Element] = []
        values.reserveCapacity(count)
        for _ in 0..<count { values.append(try read(&self)) }
        return values
    }

    /// The reader must have used every byte of its range.
    func finished(_ what: @autoclosure () -> String) throws(HandoverStateError) {
        guard position == end else { throw .malformed("\(what()): \(end - position) bytes left over") }
    }
}
