extension String {
    /// Whether the two hold the same UTF-8 bytes: how JSON compares member names (RFC 8259:
    /// the same code points; `==` calls canonically equivalent names equal, and K and the
    /// Kelvin sign K are two names), and how a value is known to be unchanged. Compares
    /// lengths, then bytes in place: `utf8.elementsEqual` went through the view's iterator,
    /// `==` through Unicode comparison whenever the two differed (issue 29's profile).
    public func hasSameUTF8(as other: String) -> Bool {
        guard utf8.count == other.utf8.count else { return false }
        let inPlace = utf8.withContiguousStorageIfAvailable { mine in
            other.utf8.withContiguousStorageIfAvailable { theirs in
                for index in mine.indices where mine[index] != theirs[index] { return false }
                return true
            }
        }
        return (inPlace ?? nil) ?? utf8.elementsEqual(other.utf8)
    }

    /// How many characters (extended grapheme clusters, UAX #29) the text has, counted no
    /// further than `limit`. ASCII text needs no grapheme breaking: every byte is one
    /// character but CR LF, which is one. The character iterator was a quarter of handling
    /// a `set` (issue 29).
    public func characterCount(upTo limit: Int) -> Int {
        let ascii: Int? = utf8.withContiguousStorageIfAvailable { bytes in
            var count = 0
            var previous: UInt8 = 0
            for byte in bytes {
                guard byte < 0x80 else { return nil }
                if !(byte == 0x0A && previous == 0x0D) { count += 1 }
                if count > limit { return count }
                previous = byte
            }
            return count
        } ?? nil
        if let ascii { return ascii }
        var count = 0
        for _ in self {
            count += 1
            if count > limit { break }
        }
        return count
    }
}
