/// A key the form reacts to.
enum Key: Equatable {
    case character(Character)
    case backspace
    case clearField
    case next
    case previous
    case enter
    case escape
    case interrupt
}

/// Turns terminal input bytes into keys (UTF-8 text and the usual escape sequences).
struct KeyDecoder {
    private var pending: [UInt8] = []

    /// Decodes as many keys as `bytes` complete. A lone ESC at the end of a read is Esc.
    mutating func decode(_ bytes: [UInt8]) -> [Key] {
        pending += bytes
        var keys: [Key] = []
        var index = 0
        while index < pending.count {
            let byte = pending[index]
            switch byte {
            case 0x1B:
                if index + 2 < pending.count, pending[index + 1] == UInt8(ascii: "[") {
                    switch pending[index + 2] {
                    case UInt8(ascii: "A"): keys.append(.previous)
                    case UInt8(ascii: "B"): keys.append(.next)
                    case UInt8(ascii: "Z"): keys.append(.previous)
                    default: break
                    }
                    index += 3
                } else if index + 1 == pending.count {
                    keys.append(.escape)
                    index += 1
                } else {
                    index += 2  // Alt+key and unknown sequences are ignored
                }
            case 0x03: keys.append(.interrupt); index += 1
            case 0x09: keys.append(.next); index += 1
            case 0x0D, 0x0A: keys.append(.enter); index += 1
            case 0x7F, 0x08: keys.append(.backspace); index += 1
            case 0x15: keys.append(.clearField); index += 1
            case 0..<0x20: index += 1
            default:
                let length = byte >= 0xF0 ? 4 : byte >= 0xE0 ? 3 : byte >= 0xC0 ? 2 : 1
                guard index + length <= pending.count else {
                    pending.removeFirst(index)
                    return keys
                }
                let text = String(decoding: pending[index..<index + length], as: UTF8.self)
                keys.append(contentsOf: text.map { .character($0) })
                index += length
            }
        }
        pending.removeAll()
        return keys
    }
}
