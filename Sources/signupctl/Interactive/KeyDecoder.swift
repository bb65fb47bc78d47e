/// A key the form reacts to.
enum Key: Equatable {
    /// Typed or pasted text, control characters removed.
    case text(String)
    case left, right, wordLeft, wordRight, home, end
    case up, down, tab, backTab
    case backspace, delete, deleteWordBack, killToStart, killToEnd
    case enter, escape, interrupt, redraw
    /// A line break inside a bracketed paste: the next field, never a submit.
    case pastedNewline
    /// Ctrl-Z: the form does not suspend (it says so).
    case suspend
}

/// Turns terminal input bytes into keys: UTF-8 text (also split across reads), C0
/// controls, CSI sequences with parameters and modifiers (`ESC [ 1 ; 5 C`, `ESC [ 3 ~`),
/// SS3 sequences (`ESC O A`), Alt+key, and bracketed paste (`ESC [ 200 ~ … ESC [ 201 ~`).
/// Sequences it does not know are consumed whole and ignored, never typed.
///
/// An incomplete sequence at the end of a read is kept; when no more input comes soon
/// (`hasPending`), the caller calls `flush()`, which reads a lone ESC as Esc.
struct KeyDecoder {
    private var pending: [UInt8] = []
    private var pasting = false
    private var pasted: [UInt8] = []
    private static let pasteEnd: [UInt8] = Array("\u{1B}[201~".utf8)

    /// Whether bytes wait for the rest of a sequence.
    var hasPending: Bool { !pending.isEmpty }

    mutating func decode(_ bytes: [UInt8]) -> [Key] {
        pending += bytes
        var keys: [Key] = []
        var text = ""
        func emit(_ key: Key) {
            if !text.isEmpty { keys.append(.text(text)); text = "" }
            keys.append(key)
        }
        var index = 0
        scan: while index < pending.count {
            if pasting {
                if let end = Self.find(Self.pasteEnd, in: pending, from: index) {
                    pasted += pending[index..<end]
                    pasting = false
                    for key in Self.pastedKeys(pasted) { emit(key) }
                    pasted = []
                    index = end + Self.pasteEnd.count
                    continue
                }
                // Keep a possible start of the end marker for the next read.
                let keep = min(Self.pasteEnd.count - 1, pending.count - index)
                pasted += pending[index..<(pending.count - keep)]
                index = pending.count - keep
                break scan
            }
            let byte = pending[index]
            switch byte {
            case 0x1B:
                guard index + 1 < pending.count else { break scan }  // wait: Esc or a sequence?
                let next = pending[index + 1]
                if next == UInt8(ascii: "[") {
                    guard let (key, length) = csi(at: index) else { break scan }
                    if let key { emit(key) }
                    index += length
                } else if next == UInt8(ascii: "O") {
                    guard index + 2 < pending.count else { break scan }
                    if let key = Self.cursorKey(pending[index + 2], modifier: 1) { emit(key) }
                    index += 3
                } else if next == 0x1B {
                    emit(.escape)
                    index += 1
                } else {
                    switch next {
                    case 0x7F, 0x08: emit(.deleteWordBack)
                    case UInt8(ascii: "b"): emit(.wordLeft)
                    case UInt8(ascii: "f"): emit(.wordRight)
                    default: break  // other Alt+key combinations do nothing
                    }
                    index += 2
                    // Skip the rest of a multi-byte character after Alt.
                    while index < pending.count, pending[index] & 0xC0 == 0x80 { index += 1 }
                }
            case 0x01: emit(.home); index += 1
            case 0x02: emit(.left); index += 1
            case 0x03: emit(.interrupt); index += 1
            case 0x04: emit(.delete); index += 1
            case 0x05: emit(.end); index += 1
            case 0x06: emit(.right); index += 1
            case 0x09: emit(.tab); index += 1
            case 0x0B: emit(.killToEnd); index += 1
            case 0x0C: emit(.redraw); index += 1
            case 0x0D, 0x0A: emit(.enter); index += 1
            case 0x0E: emit(.down); index += 1
            case 0x10: emit(.up); index += 1
            case 0x15: emit(.killToStart); index += 1
            case 0x17: emit(.deleteWordBack); index += 1
            case 0x1A: emit(.suspend); index += 1
            case 0x7F, 0x08: emit(.backspace); index += 1
            case 0..<0x20: index += 1
            case 0x20..<0x7F:
                text.unicodeScalars.append(Unicode.Scalar(byte))
                index += 1
            default:
                let length = byte >= 0xF8 ? 0 : byte >= 0xF0 ? 4 : byte >= 0xE0 ? 3 : byte >= 0xC0 ? 2 : 0
                guard length > 0 else { index += 1; continue }  // a stray continuation byte
                guard index + length <= pending.count else { break scan }  // the rest comes in the next read
                if let decoded = String(validating: pending[index..<index + length], as: UTF8.self) {
                    text += decoded
                    index += length
                } else {
                    index += 1
                }
            }
        }
        pending.removeFirst(index)
        if !text.isEmpty { keys.append(.text(text)) }
        return keys
    }

    /// No more input came: a lone ESC is Esc; a cut-off sequence is dropped.
    mutating func flush() -> [Key] {
        defer { pending.removeAll() }
        if pasting { return [] }
        return pending == [0x1B] ? [.escape] : []
    }

    /// Parses `ESC [ params intermediates final` at `start`: nil when incomplete, else the
    /// key (nil for one that does nothing here) and the sequence's length.
    private mutating func csi(at start: Int) -> (Key?, Int)? {
        var index = start + 2
        var parameters = ""
        while index < pending.count, (0x30...0x3F).contains(pending[index]) {
            parameters.unicodeScalars.append(Unicode.Scalar(pending[index]))
            index += 1
        }
        while index < pending.count, (0x20...0x2F).contains(pending[index]) { index += 1 }
        guard index < pending.count else { return nil }
        let final = pending[index]
        let length = index - start + 1
        guard (0x40...0x7E).contains(final) else { return (nil, length - 1) }  // broken: drop what came before
        if parameters.hasPrefix("<") || parameters.hasPrefix("?") || parameters.hasPrefix(">") { return (nil, length) }
        let numbers = parameters.split(separator: ";", omittingEmptySubsequences: false).map { Int($0.split(separator: ":").first ?? "") }
        let first = numbers.first.flatMap { $0 } ?? 1
        let modifier = numbers.count > 1 ? (numbers[1] ?? 1) : 1
        if final == UInt8(ascii: "~") {
            switch first {
            case 1, 7: return (.home, length)
            case 4, 8: return (.end, length)
            case 3: return (modifier > 1 ? .deleteWordBack : .delete, length)
            case 200:
                pasting = true
                return (nil, length)
            default: return (nil, length)  // Insert, PgUp, PgDn, F5…F12
            }
        }
        if final == UInt8(ascii: "Z") { return (.backTab, length) }
        return (Self.cursorKey(final, modifier: modifier), length)
    }

    /// Arrows, Home and End, as CSI or SS3 finals; Ctrl or Alt with ←/→ moves by word.
    private static func cursorKey(_ final: UInt8, modifier: Int) -> Key? {
        let byWord = (modifier - 1) & 0b110 != 0
        switch final {
        case UInt8(ascii: "A"): return .up
        case UInt8(ascii: "B"): return .down
        case UInt8(ascii: "C"): return byWord ? .wordRight : .right
        case UInt8(ascii: "D"): return byWord ? .wordLeft : .left
        case UInt8(ascii: "H"): return .home
        case UInt8(ascii: "F"): return .end
        default: return nil  // F1–F4 (SS3 P–S) and the rest
        }
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8], from start: Int) -> Int? {
        guard haystack.count - start >= needle.count else { return nil }
        for index in start...(haystack.count - needle.count) where haystack[index] == needle[0] {
            if Array(haystack[index..<index + needle.count]) == needle { return index }
        }
        return nil
    }

    /// Pasted bytes as keys: a Tab moves to the next field as a typed Tab does (so a pasted
    /// `user\tpassword` fills two fields, and the password never lands in clear text in
    /// the first), a line break moves on too but never submits (`pastedNewline`), and line
    /// breaks at the very end are dropped; other control characters are dropped.
    static func pastedKeys(_ bytes: [UInt8]) -> [Key] {
        var keys: [Key] = []
        var segment: [UInt8] = []
        func flush() {
            let clean = printable(segment)
            if !clean.isEmpty { keys.append(.text(clean)) }
            segment = []
        }
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == 0x09 {
                flush()
                keys.append(.tab)
            } else if byte == 0x0D || byte == 0x0A {
                if byte == 0x0D, index + 1 < bytes.count, bytes[index + 1] == 0x0A { index += 1 }
                flush()
                keys.append(.pastedNewline)
            } else {
                segment.append(byte)
            }
            index += 1
        }
        flush()
        while keys.last == .pastedNewline { keys.removeLast() }
        return keys
    }

    /// Pasted bytes as text for a one-line field: control characters (newlines, tabs, ESC) dropped.
    private static func printable(_ bytes: [UInt8]) -> String {
        let text = String(decoding: bytes, as: UTF8.self)
        return String(String.UnicodeScalarView(text.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F && !(0x80..<0xA0).contains($0.value) }))
    }
}
