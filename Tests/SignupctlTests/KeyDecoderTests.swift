import Testing

@testable import signupctl

@Suite("Terminal input decoding")
struct KeyDecoderTests {
    static func decode(_ chunks: [[UInt8]]) -> [Key] {
        var decoder = KeyDecoder()
        var keys: [Key] = []
        for chunk in chunks { keys += decoder.decode(chunk) }
        return keys + decoder.flush()
    }

    static func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    @Test("sequences decode to one key each, never to typed text", arguments: [
        ("\u{1B}[A", Key.up), ("\u{1B}[B", .down), ("\u{1B}[C", .right), ("\u{1B}[D", .left),
        ("\u{1B}OA", .up), ("\u{1B}OC", .right), ("\u{1B}OH", .home), ("\u{1B}OF", .end),
        ("\u{1B}[H", .home), ("\u{1B}[F", .end), ("\u{1B}[1~", .home), ("\u{1B}[4~", .end),
        ("\u{1B}[7~", .home), ("\u{1B}[8~", .end), ("\u{1B}[3~", .delete), ("\u{1B}[Z", .backTab),
        ("\u{1B}[1;5C", .wordRight), ("\u{1B}[1;5D", .wordLeft), ("\u{1B}[1;3D", .wordLeft), ("\u{1B}[1;2A", .up),
        ("\u{1B}\u{7F}", .deleteWordBack), ("\u{1B}b", .wordLeft), ("\u{1B}f", .wordRight),
        ("\u{01}", .home), ("\u{05}", .end), ("\u{02}", .left), ("\u{06}", .right), ("\u{04}", .delete),
        ("\u{17}", .deleteWordBack), ("\u{15}", .killToStart), ("\u{0B}", .killToEnd),
        ("\t", .tab), ("\r", .enter), ("\n", .enter), ("\u{7F}", .backspace), ("\u{08}", .backspace),
        ("\u{03}", .interrupt), ("\u{1A}", .suspend), ("\u{0C}", .redraw), ("\u{1B}", .escape),
    ])
    func oneKey(_ input: String, _ key: Key) {
        #expect(Self.decode([Self.bytes(input)]) == [key], "\(input.debugDescription)")
    }

    @Test("keys without a meaning here are swallowed whole", arguments: [
        "\u{1B}[5~", "\u{1B}[6~", "\u{1B}[2~", "\u{1B}[15~", "\u{1B}[24;5~", "\u{1B}OP", "\u{1B}OS",
        "\u{1B}[<0;10;5M", "\u{1B}[?1;2c", "\u{1B}[I", "\u{1B}x", "\u{1B}[201~",
    ])
    func ignored(_ input: String) {
        #expect(Self.decode([Self.bytes(input)]) == [], "\(input.debugDescription)")
    }

    @Test("text around sequences stays in order")
    func mixed() {
        let keys = Self.decode([Self.bytes("ab\u{1B}[Dc\u{1B}[3~d\tpass word\r")])
        #expect(keys == [.text("ab"), .left, .text("c"), .delete, .text("d"), .tab, .text("pass word"), .enter])
    }

    @Test("a sequence or a character split across reads is put back together")
    func split() {
        #expect(Self.decode([[0x1B], Self.bytes("[D")]) == [.left])
        #expect(Self.decode([Self.bytes("\u{1B}["), Self.bytes("1;5"), Self.bytes("C")]) == [.wordRight])
        #expect(Self.decode([[0x1B, UInt8(ascii: "O")], [UInt8(ascii: "A")]]) == [.up])
        #expect(Self.decode([[0xC3], [0xA9]]) == [.text("é")])
        #expect(Self.decode([[0xF0, 0x9F], [0x98], [0x80, 0x61]]) == [.text("😀a")])
        #expect(Self.decode([Self.bytes("x"), [0xE2, 0x82], [0xAC]]) == [.text("x"), .text("€")])
    }

    @Test("a lone ESC is Esc only once no more input comes")
    func loneEscape() {
        var decoder = KeyDecoder()
        #expect(decoder.decode([0x1B]) == [])
        #expect(decoder.hasPending)
        #expect(decoder.flush() == [.escape])
        #expect(!decoder.hasPending)
        #expect(Self.decode([[0x1B, 0x1B]]) == [.escape, .escape])
    }

    @Test("bracketed paste is text, a Tab in it moves on, a line break moves on but never submits, also split across reads")
    func paste() {
        #expect(Self.decode([Self.bytes("\u{1B}[200~pass\tword\n\u{1B}[201~")]) == [.text("pass"), .tab, .text("word")])
        #expect(Self.decode([Self.bytes("\u{1B}[200~dave\tsecret1\tsecret1\u{1B}[201~")])
                == [.text("dave"), .tab, .text("secret1"), .tab, .text("secret1")])
        #expect(Self.decode([Self.bytes("\u{1B}[200~a\r\nb\n\n\u{1B}[201~")]) == [.text("a"), .pastedNewline, .text("b")])
        #expect(Self.decode([Self.bytes("\u{1B}[200~pa"), Self.bytes("ss\u{1B}[2"), Self.bytes("01~\r")]) == [.text("pass"), .enter])
        // Enter inside a paste does not submit; a split é inside a paste is one character.
        #expect(Self.decode([Self.bytes("\u{1B}[200~a") + [0xC3], [0xA9] + Self.bytes("\r\u{1B}[201~")]) == [.text("aé")])
    }

    @Test("invalid UTF-8 is skipped, not typed as U+FFFD")
    func invalid() {
        #expect(Self.decode([[0x80, 0x61, 0xFF, 0x62, 0xC3, 0x28]]) == [.text("ab("),])
    }
}

@Suite("Field editing")
struct LineEditorTests {
    static func edit(_ keys: [Key]) -> LineEditor {
        var editor = LineEditor()
        for key in keys { editor.apply(key) }
        return editor
    }

    @Test("the cursor moves within the field and edits happen there")
    func middle() {
        let editor = Self.edit([.text("alce"), .left, .left, .text("i")])
        #expect(editor.text == "alice")
        #expect(editor.cursor == 3)
        #expect(Self.edit([.text("alice"), .home, .delete]).text == "lice")
        #expect(Self.edit([.text("alice"), .home, .right, .backspace]).text == "lice")
        #expect(Self.edit([.text("alice"), .left, .left, .killToEnd]).text == "ali")
        #expect(Self.edit([.text("alice"), .left, .left, .killToStart]).text == "ce")
        #expect(Self.edit([.text("pass word"), .deleteWordBack]).text == "pass ")
        #expect(Self.edit([.text("pass word"), .wordLeft, .deleteWordBack]).text == "word")
        #expect(Self.edit([.text("pass word"), .home, .wordRight, .text("!")]).text == "pass! word")
        #expect(Self.edit([.text("é😀"), .left, .backspace]).text == "😀")
    }

    @Test("moves at the ends change nothing, and say so")
    func bounds() {
        var editor = LineEditor()
        var changed: [Bool] = []
        for key in [Key.left, .backspace, .delete, .text("a"), .right, .home] { changed.append(editor.apply(key)) }
        #expect(changed == [false, false, false, true, false, false])
        #expect(editor.cursor == 0)
    }
}
