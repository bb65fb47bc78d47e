/// The bytes a `JSONWriter` has written, in an array kept longer than what is written
/// (`count`): an append is a copy into room that is there already. `Array.append(contentsOf:)`
/// took some 90 instructions for each piece of an event, a fifth of writing a keystroke's
/// answer (issue 29). Past `count` the bytes are stale and never shown.
struct ByteStore: Sendable {
    private var storage: [UInt8]
    /// The bytes written.
    private(set) var count = 0

    init(capacity: Int) {
        storage = Array(repeating: 0, count: max(capacity, 16))
    }

    /// The memory held, written or not (what a connection's budget of kept storage counts).
    var capacity: Int { storage.capacity }

    /// A copy of the bytes written.
    var bytes: [UInt8] { count == storage.count ? storage : Array(storage[..<count]) }

    /// The bytes written, without a copy.
    func withBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try storage.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[..<count])) }
    }

    /// Forgets what was written; the room is kept.
    mutating func removeAll() {
        count = 0
    }

    // Inlined: most pieces of an event are a byte or a few, and the call cost more than the copy.
    @inline(__always)
    mutating func append(_ byte: UInt8) {
        if count == storage.count { grow(toHold: 1) }
        storage[count] = byte
        count += 1
    }

    @inline(__always)
    mutating func append(_ source: UnsafeRawBufferPointer) {
        let length = source.count
        guard length > 0, let from = source.baseAddress else { return }
        if storage.count - count < length { grow(toHold: length) }
        let at = count
        storage.withUnsafeMutableBytes { $0.baseAddress.unsafelyUnwrapped.advanced(by: at).copyMemory(from: from, byteCount: length) }
        count += length
    }

    @inline(__always)
    mutating func append(_ source: UnsafeBufferPointer<UInt8>) {
        append(UnsafeRawBufferPointer(source))
    }

    /// At least doubles the room, and makes room for `length` more bytes.
    private mutating func grow(toHold length: Int) {
        storage.append(contentsOf: repeatElement(0, count: max(storage.count, length)))
    }
}
