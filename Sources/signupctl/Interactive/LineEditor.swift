/// One field's text and the cursor within it, edited the way readline does.
struct LineEditor: Equatable {
    private(set) var characters: [Character] = []
    /// Between 0 and `characters.count`.
    private(set) var cursor = 0

    var text: String { String(characters) }

    /// Applies an editing key; returns whether the text changed (and must be sent).
    @discardableResult
    mutating func apply(_ key: Key) -> Bool {
        let before = characters
        switch key {
        case .text(let typed):
            characters.insert(contentsOf: Array(typed), at: cursor)
            cursor += typed.count
        case .left: cursor = max(0, cursor - 1)
        case .right: cursor = min(characters.count, cursor + 1)
        case .home: cursor = 0
        case .end: cursor = characters.count
        case .wordLeft: cursor = wordStart(before: cursor)
        case .wordRight: cursor = wordEnd(after: cursor)
        case .backspace:
            if cursor > 0 {
                characters.remove(at: cursor - 1)
                cursor -= 1
            }
        case .delete:
            if cursor < characters.count { characters.remove(at: cursor) }
        case .deleteWordBack:
            let start = wordStart(before: cursor)
            characters.removeSubrange(start..<cursor)
            cursor = start
        case .killToStart:
            characters.removeSubrange(0..<cursor)
            cursor = 0
        case .killToEnd:
            characters.removeSubrange(cursor...)
        default:
            break
        }
        return characters != before
    }

    private func wordStart(before position: Int) -> Int {
        var index = position
        while index > 0, characters[index - 1].isWhitespace || characters[index - 1].isPunctuation { index -= 1 }
        while index > 0, !(characters[index - 1].isWhitespace || characters[index - 1].isPunctuation) { index -= 1 }
        return index
    }

    private func wordEnd(after position: Int) -> Int {
        var index = position
        while index < characters.count, characters[index].isWhitespace || characters[index].isPunctuation { index += 1 }
        while index < characters.count, !(characters[index].isWhitespace || characters[index].isPunctuation) { index += 1 }
        return index
    }
}
