extension LookAlikes {
    /// The table by character.
    static let latinOf: [Unicode.Scalar: Character] = Dictionary(table.map { ($0.character, $0.latin) }) { first, _ in first }

    /// `text` (NFD) with each look-alike of the table replaced by its Latin letter, or nil
    /// when it has none. A Hangul conjoining jamo is replaced only when it stands alone,
    /// with no Hangul jamo next to it: one beside another joins it in a syllable block.
    public static func folded(_ text: String) -> String? {
        let scalars = Array(text.unicodeScalars)
        var result = String.UnicodeScalarView()
        var changed = false
        for (index, scalar) in scalars.enumerated() {
            guard let latin = latinOf[scalar], !isConjoiningJamo(scalar) || standsAlone(at: index, in: scalars) else {
                result.append(scalar)
                continue
            }
            result.append(contentsOf: latin.unicodeScalars)
            changed = true
        }
        return changed ? String(result) : nil
    }

    /// Whether no Hangul jamo or syllable is next to `scalars[index]`.
    private static func standsAlone(at index: Int, in scalars: [Unicode.Scalar]) -> Bool {
        let before = index > 0 ? scalars[index - 1] : nil
        let after = index + 1 < scalars.count ? scalars[index + 1] : nil
        return [before, after].allSatisfy { neighbour in neighbour.map { !isConjoiningJamo($0) && !isSyllable($0) } ?? true }
    }

    /// Hangul Jamo, Jamo Extended-A and -B: the letters that join into syllable blocks.
    static func isConjoiningJamo(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x1100...0x11FF, 0xA960...0xA97F, 0xD7B0...0xD7FF: true
        default: false
        }
    }

    private static func isSyllable(_ scalar: Unicode.Scalar) -> Bool { (0xAC00...0xD7A3).contains(scalar.value) }

    /// Names the table's content: its size and an FNV-1a hash of every entry, so that any
    /// change of the table changes `Usernames.keyVersion`.
    public static var version: String { fingerprint(of: table) }

    /// `version` of any table (the tests check that a change shows).
    public static func fingerprint(of entries: [LookAlike]) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for entry in entries {
            for byte in "\(entry.character.value)>\(entry.latin);".utf8 {
                hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
            }
        }
        let hex = String(hash, radix: 16)
        return "\(entries.count)." + String(repeating: "0", count: 16 - hex.count) + hex
    }
}
