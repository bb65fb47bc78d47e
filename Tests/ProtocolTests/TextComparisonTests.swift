import SignupProtocol
import Testing

/// The byte comparison and the character count the hot path uses (issue 29), against what
/// they stand for: `utf8.elementsEqual` and `String.count`.
@Suite struct TextComparisonTests {
    static let texts = [
        "", "a", "abc", "abcdef", "a\r\nb", "\r\n\r\n", "\r\r\n", "\n\r", "password", "repeatedPassword", "é", "e\u{301}", "🇫🇷🇩🇪", "ab👍🏽c",
        "café au lait", "cafe\u{301} au lait", String(repeating: "x", count: 40), String(repeating: "é", count: 40), "密码12345", "\u{0}\u{7F}",
    ]

    @Test("same UTF-8: as the bytes say, not as == says", arguments: texts)
    func sameUTF8(_ text: String) {
        for other in Self.texts {
            #expect(text.hasSameUTF8(as: other) == text.utf8.elementsEqual(other.utf8), "\(text.debugDescription) against \(other.debugDescription)")
        }
        #expect(!"é".hasSameUTF8(as: "e\u{301}"))
        #expect("é" == "e\u{301}")
    }

    @Test("characters counted up to a limit: the count, or one past the limit", arguments: texts)
    func characterCount(_ text: String) {
        for limit in 0...45 {
            #expect(text.characterCount(upTo: limit) == min(text.count, limit + 1), "\(text.debugDescription) up to \(limit)")
        }
    }
}
