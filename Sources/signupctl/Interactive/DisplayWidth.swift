/// How many terminal columns text takes: East Asian Wide and Fullwidth characters and
/// emoji shown as emoji take two, combining marks, joiners and other zero-width format
/// characters none (they belong to the character before), everything else one. A
/// `Character` is a whole grapheme cluster (`👍🏽`, a ZWJ family), so it is measured once.
enum DisplayWidth {
    static func of(_ character: Character) -> Int {
        let scalars = character.unicodeScalars
        guard let first = scalars.first else { return 0 }
        if scalars.contains(where: { $0.value == 0xFE0F }) && first.properties.isEmoji { return 2 }
        if first.properties.isEmojiPresentation { return 2 }
        if isWide(first.value) { return 2 }
        switch first.properties.generalCategory {
        case .nonspacingMark, .enclosingMark, .format, .control: return 0
        default: return 1
        }
    }

    static func of(_ text: some Sequence<Character>) -> Int {
        text.reduce(0) { $0 + of($1) }
    }

    /// `text` broken into lines of at most `width` columns: a Latin word that does not fit
    /// moves to the next line whole (broken at the space before it, which is dropped); wide
    /// (Chinese) text breaks between any two characters, as it is written.
    static func wrap(_ text: String, width: Int) -> [String] {
        var lines: [String] = []
        var line: [Character] = []
        var used = 0
        for character in text {
            let size = of(character)
            if used + size > width, !line.isEmpty {
                // Only a Latin word moves whole: the run since the last space is all narrow.
                if size == 1, character != " ", let space = line.lastIndex(of: " "), space > 0,
                    line[(space + 1)...].allSatisfy({ of($0) == 1 }) {
                    lines.append(String(line[..<space]))
                    line = Array(line[(space + 1)...])
                } else if Self.noLineStart.contains(character), line.count > 1 {
                    // Chinese punctuation never starts a line: the characters before it go along
                    // (as many as are such punctuation themselves, and one more).
                    var carried = 1
                    while carried < line.count - 1, Self.noLineStart.contains(line[line.count - carried]) { carried += 1 }
                    lines.append(String(line.dropLast(carried)))
                    line = Array(line.suffix(carried))
                } else {
                    lines.append(String(line))
                    line = []
                }
                used = of(line)
            }
            if line.isEmpty && character == " " { continue }
            line.append(character)
            used += size
        }
        if !line.isEmpty { lines.append(String(line)) }
        return lines
    }

    /// Punctuation that Chinese typography does not put at the start of a line.
    static let noLineStart: Set<Character> = ["，", "。", "、", "）", "」", "』", "！", "？", "：", "；", "》"]

    /// East Asian Wide (W) and Fullwidth (F) blocks (UAX #11), the ranges terminals draw double.
    private static func isWide(_ v: UInt32) -> Bool {
        switch v {
        case 0x1100...0x115F, 0x231A...0x231B, 0x2329...0x232A, 0x2E80...0x303E, 0x3041...0x33FF,
             0x3400...0x4DBF, 0x4E00...0x9FFF, 0xA000...0xA4CF, 0xA960...0xA97F, 0xAC00...0xD7A3,
             0xF900...0xFAFF, 0xFE10...0xFE19, 0xFE30...0xFE6F, 0xFF00...0xFF60, 0xFFE0...0xFFE6,
             0x16FE0...0x16FE4, 0x17000...0x18CFF, 0x1B000...0x1B2FF, 0x1F200...0x1F2FF,
             0x20000...0x2FFFD, 0x30000...0x3FFFD:
            return true
        default:
            return false
        }
    }
}
