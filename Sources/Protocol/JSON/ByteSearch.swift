/// Finding a byte in a buffer eight bytes at a time: a byte at a time, finding each line's
/// end took some 600 of the daemon's instructions for a keystroke (issue 29). Each word is
/// tested with the usual carry trick; its lowest flagged byte is always a true match (a
/// false flag only ever sits above a true one). Not used for a request's strings: they are
/// short, and the plain loop was as fast there.
enum ByteSearch {
    private static let ones: UInt64 = 0x0101_0101_0101_0101
    private static let highs: UInt64 = 0x8080_8080_8080_8080

    /// The high bit of each byte of `word` that is zero (exact at the lowest).
    @inline(__always)
    private static func zeros(_ word: UInt64) -> UInt64 { (word &- ones) & ~word & highs }

    /// The offset of the first `byte` at or after `start`, or nil.
    static func first(_ byte: UInt8, in bytes: UnsafeRawBufferPointer, from start: Int) -> Int? {
        var index = start
        let count = bytes.count
        if let base = bytes.baseAddress {
            let pattern = ones &* UInt64(byte)
            while index + 8 <= count {
                let found = zeros(base.loadUnaligned(fromByteOffset: index, as: UInt64.self) ^ pattern)
                if found != 0 { return index + found.trailingZeroBitCount / 8 }
                index += 8
            }
        }
        while index < count {
            if bytes[index] == byte { return index }
            index += 1
        }
        return nil
    }
}
