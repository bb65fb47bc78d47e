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
        #expect(try identity("Alice").similarityKeys == (try identity("alice")).similarityKeys, "one account, one set")
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
            ("bob smith", .invalidCharacters), ("bob!", .invalidCharacters), ("\u{FDFA}", .invalidCharacters),
            ("\u{0430}nn\u{0430}", .mixedScripts), ("user\u{0661}\u{0662}", .mixedScripts), ("\u{03BF}cean", .mixedScripts),
            ("12\u{0661}", .mixedScripts),
            // The same nonspacing mark twice in a row shows as one: invisible (helper-40 was
            // told "mixes scripts"); two different marks are a valid name (below).
            ("xe\u{0301}\u{0301}", .invisibleCharacters), ("e\u{0301}\u{0301}", .invisibleCharacters),
            ("\u{05D3}\u{05E0}\u{05D9}12\u{0661}", .mixedScripts),
            // Tatweel, and names of modifier letters only.
            ("\u{0639}\u{0640}\u{0644}\u{064A}", .invalidCharacters), ("\u{0640}", .invalidCharacters), ("\u{0640}\u{0640}", .invalidCharacters),
            ("\u{02BC}\u{02BC}", .noLetter), ("\u{0E46}\u{0E46}", .noLetter), ("\u{A717}\u{A717}", .noLetter), ("\u{02D1}\u{02D1}", .noLetter),
            // RFC 5893: a right-to-left name starts with a right-to-left letter.
            ("123\u{0639}\u{0644}\u{064A}", .bidiOrder), ("12\u{05D3}\u{05E0}\u{05D9}", .bidiOrder),
            // Marks only after a letter of their script, at most 4 a character, 8 code points.
            ("\u{0301}abc", .invalidCharacters), ("1\u{0301}", .invalidCharacters), ("a\u{093F}", .invalidCharacters),
            ("za\u{0300}\u{0301}\u{0302}\u{0303}\u{0304}\u{0305}lgo", .overloadedCharacter),
            (String(repeating: "\u{1100}", count: 85), .overloadedCharacter),
            ("\u{FDFA}", .invalidCharacters),
        ]
        for (name, rejection) in cases {
            #expect(Usernames.identity(of: name) == .failure(rejection), "\(name.unicodeScalars.map { String($0.value, radix: 16) })")
            #expect(Usernames.rejection(of: name) == rejection, "the rule alone says the same")
        }
    }

    @Test("names of every script with combining marks are valid, and RTL names in one order", arguments: [
        "\u{0939}\u{093F}\u{0928}\u{094D}\u{0926}\u{0940}", "\u{0BA4}\u{0BAE}\u{0BBF}\u{0BB4}\u{0BCD}",
        "\u{0E2A}\u{0E21}\u{0E28}\u{0E31}\u{0E01}\u{0E14}\u{0E34}\u{0E4C}", "\u{1EB9}\u{0300}", "i\u{0307}stanbul",
        "\u{0639}\u{0644}\u{064A}123", "\u{05D3}\u{05E0}\u{05D9}12", "\u{0639}\u{0644}\u{064A}\u{0661}\u{0662}", "\u{00FC}ser",
        "za\u{0302}\u{0303}\u{0304}\u{0305}lgo", "xe\u{0300}\u{0301}",
    ])
    func marksAndBidi(_ name: String) {
        #expect(throws: Never.self, "\(name.unicodeScalars.map { String($0.value, radix: 16) })") { try identity(name) }
        #expect(Usernames.rejection(of: name) == nil)
    }

    @Test("any way of writing a name shares a similarity key with its look-alikes", arguments: [
        ("apple", "appIe"), ("alice", "aIice"), ("alice", "ALlCE"), ("alice", "AL1CE"), ("alice", "\u{1D00}\u{029F}\u{026A}\u{1D04}\u{1D07}"),
        ("lll", "III"), ("user1", "userI"), ("OSCAR", "0SCAR"), ("HELLO", "HELL0"), ("root", "r00t"),
        ("KATE", "\u{041A}\u{0410}\u{0422}\u{0415}"), ("KATE", "\u{039A}\u{0391}\u{03A4}\u{0395}"), ("KATE", "\u{A4D7}\u{A4EE}\u{A4D4}\u{A4F0}"),
        ("TOP", "\u{0422}\u{041E}\u{0420}"), ("TOP", "\u{03A4}\u{039F}\u{03A1}"), ("TOP", "\u{13A2}\u{13BE}\u{13E2}"), ("TOP", "\u{A4D4}\u{A4F3}\u{A4D1}"),
        ("mike", "\u{041C}\u{0406}\u{041A}\u{0415}"), ("mike", "\u{039C}\u{0399}\u{039A}\u{0395}"),
        ("bob", "\u{0412}\u{041E}\u{0412}"), ("bob", "\u{0392}\u{039F}\u{0392}"), ("bob", "\u{042C}\u{043E}\u{042C}"),
        ("apple", "\u{13AA}\u{13E2}\u{13E2}\u{13DE}\u{13AC}"), ("apple", "\u{0430}\u{0440}\u{0440}\u{04CF}\u{0435}"),
        ("istanbul", "\u{0130}stanbul"), ("user", "\u{00FC}ser"), ("modern", "rnodern"), ("ape", "\u{0430}\u{0440}\u{0435}"),
    ])
    func lookAlikes(_ first: String, _ second: String) throws {
        let a = try identity(first)
        let b = try identity(second)
        #expect(a.key != b.key)
        #expect(!Set(a.similarityKeys).isDisjoint(with: b.similarityKeys), "\(a.similarityKeys) \(b.similarityKeys)")
    }

    @Test("names that only look different stay apart")
    func distinctNames() throws {
        for (first, second) in [("alice", "bob"), ("user", "users"), ("\u{0939}\u{093F}\u{0928}\u{094D}\u{0926}\u{0940}", "\u{0939}\u{0928}\u{094D}\u{0926}")] {
            #expect(Set(try identity(first).similarityKeys).isDisjoint(with: try identity(second).similarityKeys), "\(first) \(second)")
        }
    }

    @Test("the engine's limits and messages name the same numbers as the identity function")
    func limitsAgreeWithTheEngine() {
        #expect(UsernameRules.maxLength == Usernames.maxCharacters)
        #expect(UsernameRules.maxBytes == Usernames.maxBytes)
        #expect(UsernameRules.maxInputBytes == Usernames.maxInputBytes)
        #expect(UsernameRules.maxMarksPerCharacter == Usernames.maxMarksPerCharacter)
        #expect(UsernameRules.maxCodePointsPerCharacter == Usernames.maxCodePointsPerCharacter)
    }

    @Test("the key version names the algorithm, the look-alike table and the Unicode version")
    func keyVersion() {
        #expect(Usernames.keyVersion == "NFKC_Casefold+UTS39-similarity+look-alikes-\(LookAlikes.version)/Unicode-\(Usernames.unicodeVersion)")
        #expect(LookAlikes.version.wholeMatch(of: /[0-9]+\.[0-9a-f]{16}/) != nil)
        #expect(Usernames.unicodeVersion.wholeMatch(of: /[0-9]+\.[0-9]+/) != nil)
    }

    /// ICU is opened at first use, not linked: the version known without opening it (part of
    /// the stored keys' version) is checked against the library's when it opens.
    @Test("ICU opens at first use, and its Unicode version is the one the keys name")
    func icuOpens() {
        #expect(Usernames.openICU() == nil)
        #expect(Usernames.icuVersion.wholeMatch(of: /[1-9][0-9]*\.[0-9]+/) != nil, "\(Usernames.icuVersion)")
        #expect(Usernames.openedUnicodeVersion == Usernames.unicodeVersion)
        #expect(Usernames.unicodeVersion != "0.0")
    }
}
