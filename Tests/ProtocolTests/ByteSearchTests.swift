@testable import SignupProtocol
import Testing

/// The word-at-a-time search agrees with a byte-at-a-time one for every byte value, at
/// every place, from every start, with other matches before and after.
@Suite("Byte search")
struct ByteSearchTests {
    private func naiveFirst(_ byte: UInt8, _ bytes: [UInt8], _ start: Int) -> Int? {
        bytes.indices.first { $0 >= start && bytes[$0] == byte }
    }

    @Test("byte values at every place of buffers of 0 to 24 bytes, from several starts")
    func everyPlace() {
        // Fillers near the patterns (one above and below each) and high bytes.
        let fillers: [UInt8] = [0x61, 0x21, 0x23, 0x5D, 0x20, 0x80, 0xFF, 0x8A]
        // The patterns, their neighbours, and bytes whose high bit a carry could wrongly flag.
        let interesting: [UInt8] = [0x00, 0x01, 0x09, 0x0A, 0x0B, 0x1F, 0x20, 0x21, 0x22, 0x23, 0x5B, 0x5C, 0x5D, 0x7F, 0x80, 0x8A, 0xA2, 0xDC, 0xFF]
        var checked = 0
        var wrong: [String] = []
        for length in 0...24 {
            for filler in fillers {
                for place in 0..<max(length, 1) {
                    // Every byte value in a buffer of 17 (two words and one byte), the interesting ones elsewhere.
                    for value in length == 17 ? [UInt8](0...255) : interesting where length > 0 || value == 0 {
                        var bytes = [UInt8](repeating: filler, count: length)
                        if length > 0 { bytes[place] = value }
                        // A second match later, so that only the first is right.
                        if place + 3 < length { bytes[place + 3] = value }
                        bytes.withUnsafeBytes { raw in
                            for start in [0, 1, place, place + 1] where start <= length {
                                // Collected, not expected one by one: #expect per case made this take seconds.
                                if ByteSearch.first(value, in: raw, from: start) != naiveFirst(value, bytes, start)
                                    || ByteSearch.first(0x0A, in: raw, from: start) != naiveFirst(0x0A, bytes, start)
                                {
                                    wrong.append("\(bytes) from \(start), looking for \(value)")
                                }
                                checked += 1
                            }
                        }
                    }
                }
            }
        }
        #expect(wrong.isEmpty, "\(wrong.prefix(5))")
        #expect(checked > 100_000)
    }
}
