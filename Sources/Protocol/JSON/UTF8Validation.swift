/// Strict UTF-8 validation (RFC 3629): no overlong forms, no surrogates, nothing above
/// U+10FFFF. Written out because `String(validating:)` goes through an unspecialised
/// generic path that costs a metadata lookup per string on the hot path.
enum UTF8Validation {
    /// Whether every byte is ASCII (the common case, which needs no further check).
    static func isASCII(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var index = 0
        let count = bytes.count
        // Eight bytes at a time while possible.
        if let base = bytes.baseAddress {
            while index + 8 <= count {
                if base.loadUnaligned(fromByteOffset: index, as: UInt64.self) & 0x8080_8080_8080_8080 != 0 { return false }
                index += 8
            }
        }
        while index < count {
            if bytes[index] >= 0x80 { return false }
            index += 1
        }
        return true
    }

    /// Whether `bytes` is well-formed UTF-8.
    static func isValid(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var index = 0
        let count = bytes.count
        while index < count {
            let lead = bytes[index]
            if lead < 0x80 {
                index += 1
                continue
            }
            let length: Int
            var lower: UInt8 = 0x80
            var upper: UInt8 = 0xBF
            switch lead {
            case 0xC2...0xDF: length = 2
            case 0xE0: length = 3; lower = 0xA0
            case 0xE1...0xEC, 0xEE...0xEF: length = 3
            case 0xED: length = 3; upper = 0x9F  // no surrogates
            case 0xF0: length = 4; lower = 0x90
            case 0xF1...0xF3: length = 4
            case 0xF4: length = 4; upper = 0x8F  // nothing above U+10FFFF
            default: return false  // continuation byte, overlong lead, or 0xF5...
            }
            guard index + length <= count else { return false }
            let second = bytes[index + 1]
            guard second >= lower && second <= upper else { return false }
            for offset in 2..<max(2, length) where bytes[index + offset] & 0xC0 != 0x80 {
                return false
            }
            index += length
        }
        return true
    }

    /// The string for validated bytes, or nil when they are not UTF-8.
    static func string(_ bytes: UnsafeRawBufferPointer) -> String? {
        guard isASCII(bytes) || isValid(bytes) else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }
}
