import FormEngine
import Testing
import UsernameIdentity

@Suite("The username identity function")
struct UsernameIdentityTests {
    func identity(_ name: String) throws -> UsernameIdentity {
        try Usernames.identity(of: name).get()
    }

    @Test("names that were valid stay valid, and keep their spelling for display")
    func existingNamesStayValid() throws {
        for name in ["\u{00FC}ser", "用户", "alice", "Alice", "user12", "\u{D55C}\u{AD6D}", "\u{0130}stanbul"] {
            #expect(try identity(name).display == name)
        }
    }

    @Test("display is NFC, key is NFKC_Casefold, skeleton is UTS #39's")
    func forms() throws {
        let decomposed = try identity("u\u{0308}ser")
        #expect(Array(decomposed.display.unicodeScalars) == Array("\u{00FC}ser".unicodeScalars))
        #expect(try identity("Stra\u{00DF}e").key == "strasse")
        #expect(try identity("ａｌｉｃｅ").key == "alice")
        #expect(Array(try identity("\u{0130}").key.unicodeScalars) == ["i", "\u{0307}"])
        #expect(try identity("\u{0430}\u{0440}\u{0435}").skeleton == (try identity("ape")).skeleton)
        #expect(try identity("modern").skeleton == (try identity("rnodern")).skeleton)
        #expect(try identity("modern").key != (try identity("rnodern")).key)
    }

    @Test("the key is compared as scalars, not with String's canonical ==")
    func keysAreExact() throws {
        let nfc = try identity("\u{D55C}\u{AD6D}")
        let nfd = try identity("\u{1112}\u{1161}\u{11AB}\u{1100}\u{116E}\u{11A8}")
        #expect(Array(nfc.key.utf8) == Array(nfd.key.utf8))
        #expect(Array(nfc.skeleton.utf8) == Array(nfd.skeleton.utf8))
        #expect(Array(nfc.legacyKey.utf8) != Array(nfd.legacyKey.utf8), "v1 keyed the bytes as typed")
    }

    @Test("grapheme and byte limits, counted on the normalised name")
    func limits() throws {
        #expect(throws: Never.self) { try identity(String(repeating: "a", count: 39)) }
        #expect(Usernames.identity(of: String(repeating: "a", count: 40)) == .failure(.tooLong))
        // 13 ﬃ are 13 characters as typed but 39 after NFKC_Casefold; 14 are 42.
        #expect(throws: Never.self) { try identity(String(repeating: "\u{FB03}", count: 13)) }
        #expect(Usernames.identity(of: String(repeating: "\u{FB03}", count: 14)) == .failure(.tooLong))
        // 39 graphemes, each a 7-jamo Hangul cluster: 819 bytes.
        let heavy = String(repeating: "\u{1100}\u{1161}\u{1161}\u{1161}\u{1161}\u{1161}\u{11A8}", count: 39)
        #expect(Usernames.identity(of: heavy) == .failure(.tooManyBytes))
        #expect(Usernames.identity(of: String(repeating: "\u{1160}", count: 21_000)) == .failure(.tooManyBytes))
        // 85 three-byte letters are 255 bytes but 85 characters: the character limit says no.
        #expect(Usernames.identity(of: String(repeating: "用", count: 85)) == .failure(.tooLong))
    }

    @Test("invisible, non-letter and mixed-script names are refused, each with its reason")
    func refusals() {
        let cases: [(String, UsernameRejection)] = [
            ("\u{3164}", .invisibleCharacters), ("dave\u{115F}", .invisibleCharacters), ("bo\u{200D}b", .invisibleCharacters),
            ("alice\u{202E}", .invisibleCharacters), ("bob\u{FE0F}", .invisibleCharacters), ("a\u{00AD}b", .invisibleCharacters),
            ("bob smith", .invalidCharacters), ("bob!", .invalidCharacters), ("i\u{0307}", .invalidCharacters), ("\u{FDFA}", .invalidCharacters),
            ("\u{0430}nn\u{0430}", .mixedScripts), ("user\u{0661}\u{0662}", .mixedScripts), ("\u{03BF}cean", .mixedScripts),
            ("12\u{0661}", .mixedScripts),
        ]
        for (name, rejection) in cases {
            #expect(Usernames.identity(of: name) == .failure(rejection), "\(name.unicodeScalars.map { String($0.value, radix: 16) })")
        }
    }

    @Test("the engine's limits and messages name the same numbers as the identity function")
    func limitsAgreeWithTheEngine() {
        #expect(UsernameRules.maxLength == Usernames.maxCharacters)
        #expect(UsernameRules.maxBytes == Usernames.maxBytes)
    }

    @Test("the key version names the algorithm and the Unicode version")
    func keyVersion() {
        #expect(Usernames.keyVersion == "NFKC_Casefold+UTS39-skeleton/Unicode-\(Usernames.unicodeVersion)")
        #expect(Usernames.unicodeVersion.wholeMatch(of: /[0-9]+\.[0-9]+/) != nil)
    }
}
