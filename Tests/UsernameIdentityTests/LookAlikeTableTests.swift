import Testing
import UsernameIdentity

/// A Latin name and a name that people read as it, with look-alikes UTS #39 alone does not fold.
struct LookAlikePair: Sendable, CustomTestStringConvertible {
    let latin: String
    let lookAlike: String
    var testDescription: String { "\(latin) / \(lookAlike)" }

    init(_ latin: String, _ lookAlike: String) {
        self.latin = latin
        self.lookAlike = lookAlike
    }

    /// The nine pairs of issue 27 (item 7), then at least one pair for every table entry.
    static let all: [LookAlikePair] = [
        // Issue 27: the hostile tester's nine second accounts. (The issue pairs hoㅇo with
        // hoho; it reads hooo, and ㅇ is no h: bㅇb3 is bob3.)
        .init("jojo", "\u{0237}o\u{0237}o"), .init("bill", "b\u{3163}ll"), .init("hello", "he\u{4E28}\u{4E28}o"),
        .init("bob3", "b\u{3147}b3"), .init("hooo", "ho\u{3147}o"), .init("lol", "\u{3163}o\u{3163}"),
        .init("viva", "\u{028B}i\u{028B}a"), .init("kiki", "\u{0138}i\u{0138}i"), .init("poo", "\u{146D}\u{1424}\u{1424}"),
        // Latin and IPA letters.
        .init("circa", "\u{0188}ir\u{0188}a"), .init("jam", "\u{029D}am"), .init("rory", "\u{027E}o\u{027E}y"),
        .init("emmet", "\u{025B}mm\u{025B}t"), .init("nina", "\u{0272}i\u{0272}a"), .init("tito", "\u{0288}i\u{0288}o"),
        .init("tutu", "\u{0236}u\u{0236}u"), .init("dodo", "\u{0221}o\u{0221}o"), .init("nana", "\u{0235}a\u{0235}a"),
        .init("lulu", "\u{0234}u\u{0234}u"), .init("lala", "\u{026C}a\u{026C}a"), .init("ulu", "\u{0289}l\u{0289}"),
        .init("ursa", "\u{028A}rsa"), .init("pippa", "\u{01BF}i\u{01BF}\u{01BF}a"),
        // Hangul letters, typed as compatibility letters, conjoining jamo and halfwidth forms.
        .init("mill", "m\u{1175}ll"), .init("fill", "f\u{FFDC}ll"), .init("solo", "s\u{110B}lo"), .init("polo", "p\u{11BC}lo"),
        .init("moto", "m\u{FFB7}to"), .init("LUKE", "\u{3134}UKE"), .init("LISA", "\u{1102}ISA"), .init("LENA", "\u{11AB}ENA"),
        .init("LOLA", "\u{FFA4}OLA"), .init("CAT", "\u{3137}AT"), .init("COLE", "\u{1103}OLE"), .init("CODE", "\u{11AE}ODE"),
        .init("CUBE", "\u{FFA7}UBE"), .init("TOM", "\u{315C}OM"), .init("TED", "\u{116E}ED"), .init("TIM", "\u{FFD3}IM"),
        .init("EVA", "\u{314C}VA"), .init("EMMA", "\u{1110}MMA"), .init("ELLA", "\u{11C0}LLA"), .init("EDEN", "\u{FFBC}DEN"),
        // Han strokes and radicals.
        .init("lily", "\u{4E28}i\u{4E28}y"), .init("IRIS", "\u{5DE5}RIS"), .init("ROSE", "R\u{53E3}SE"), .init("OTTO", "\u{56D7}TT\u{56D7}"),
        .init("ZOE", "\u{4E59}OE"), .init("XENA", "\u{4E42}ENA"), .init("HANS", "\u{5344}ANS"), .init("URSULA", "\u{51F5}RSULA"),
        .init("CARL", "\u{531A}ARL"), .init("YVES", "\u{4E2B}VES"), .init("ADAM", "\u{5342}DAM"), .init("ERIC", "\u{4E47}RIC"),
        .init("TONY", "\u{4E05}ONY"), .init("PAUL", "\u{5369}AUL"),
        // Bopomofo.
        .init("LEO", "\u{3125}EO"), .init("OWEN", "\u{3116}WEN"), .init("TARA", "\u{3112}ARA"), .init("UMA", "\u{3129}MA"),
        .init("YARA", "\u{311A}ARA"),
        // Canadian syllabics, whole names (syllabics do not mix with Latin).
        .init("abba", "\u{15E9}\u{15F7}\u{15F7}\u{15E9}"), .init("cab", "\u{1455}\u{15E9}\u{15F7}"), .init("quad", "\u{146B}\u{144C}\u{15E9}\u{15EA}"),
        .init("spa", "\u{1515}\u{146D}\u{15E9}"), .init("war", "\u{15EF}\u{15E9}\u{1587}"), .init("zap", "\u{1614}\u{15E9}\u{146D}"),
        .init("nap", "\u{144E}\u{15E9}\u{146D}"), .init("ear", "\u{15F4}\u{15E9}\u{1587}"), .init("gap", "\u{161C}\u{15E9}\u{146D}"),
        .init("loop", "\u{14AA}\u{1424}\u{1424}\u{146D}"),
    ]
}

@Suite("Look-alikes beyond UTS #39: the table, pair by pair")
struct LookAlikeTableTests {
    /// Latin names: transliterations of the words below, and short names of the table's Latin letters.
    static let latinNames = [
        "inuktitut", "inuit", "nunavut", "iqaluit", "zhongguo", "beijing", "gongren", "renkou", "hanguk", "saranghae", "seoul", "ol", "on", "oo",
        "lo", "lolo", "ToT",
    ]

    func identity(_ name: String) throws -> UsernameIdentity {
        try Usernames.identity(of: name).get()
    }

    func scalars(_ text: String) -> String { text.unicodeScalars.map { "U+" + String($0.value, radix: 16, uppercase: true) }.joined(separator: " ") }

    @Test("each look-alike is a valid name, another account, and too similar to its Latin name", arguments: LookAlikePair.all)
    func pair(_ pair: LookAlikePair) throws {
        let latin = try identity(pair.latin)
        let lookAlike = try #require(try? identity(pair.lookAlike), "the look-alike passes the username rule: \(scalars(pair.lookAlike))")
        #expect(latin.key != lookAlike.key, "not the same account")
        #expect(!Set(latin.similarityKeys).isDisjoint(with: lookAlike.similarityKeys), "\(latin.similarityKeys) \(lookAlike.similarityKeys)")
        // And UTS #39 alone did not say so: the pair needs the table.
        #expect(Usernames.similarityKey(pair.latin) != Usernames.similarityKey(pair.lookAlike))
    }

    @Test("at least 60 pairs, the nine of issue 27 among them, every table entry in one")
    func coverage() {
        #expect(LookAlikePair.all.count >= 60)
        #expect(LookAlikes.table.count >= 60)
        let issue = ["\u{0237}o\u{0237}o", "b\u{3163}ll", "he\u{4E28}\u{4E28}o", "b\u{3147}b3", "ho\u{3147}o", "\u{3163}o\u{3163}", "\u{028B}i\u{028B}a", "\u{0138}i\u{0138}i", "\u{146D}\u{1424}\u{1424}"]
        #expect(issue.allSatisfy { name in LookAlikePair.all.contains { $0.lookAlike == name } })
        for entry in LookAlikes.table {
            #expect(LookAlikePair.all.contains { $0.lookAlike.unicodeScalars.contains(entry.character) }, "no pair has \(scalars(String(entry.character)))")
        }
    }

    @Test("each entry is one Latin letter UTS #39 does not already fold its character to, with a source")
    func entries() {
        var seen = Set<Unicode.Scalar>()
        for entry in LookAlikes.table {
            let character = String(entry.character)
            #expect(seen.insert(entry.character).inserted, "one entry per character: \(scalars(character))")
            #expect(!entry.sources.isEmpty)
            #expect(entry.latin.isASCII && entry.latin.isLetter)
            #expect(Usernames.similarityKey(character) != Usernames.similarityKey(String(entry.latin)), "\(scalars(character)) is folded already")
            if case .hangulForm(let letter) = entry.sources.first {
                #expect(LookAlikes.table.contains { $0.character == letter && $0.latin == entry.latin }, "\(scalars(character)) reads as its letter")
            }
        }
    }

    @Test("the table only adds keys: the UTS #39 key of every form stays one of them", arguments: LookAlikePair.all)
    func onlyAdds(_ pair: LookAlikePair) throws {
        let lookAlike = try identity(pair.lookAlike)
        let key = try #require(Usernames.similarityKey(lookAlike.display))
        #expect(lookAlike.similarityKeys.contains(key))
        #expect(lookAlike.skeleton == Usernames.similarityKey(lookAlike.key), "the login limiter's key is UTS #39's, as before")
    }

    @Test("Hangul jamo inside a syllable block are not read as Latin")
    func syllableBlocks() throws {
        // After NFD: 이 ᄋ ᅵ, 우 ᄋ ᅮ, 한 ᄒ ᅡ ᆫ, 이응 ᄋ ᅵ ᄋ ᅳ ᆼ, 사랑 ᄉ ᅡ ᄅ ᅡ ᆼ: none stands alone.
        for decomposed in ["\u{110B}\u{1175}", "\u{110B}\u{116E}", "\u{1112}\u{1161}\u{11AB}", "\u{110B}\u{1175}\u{110B}\u{1173}\u{11BC}", "\u{1109}\u{1161}\u{1105}\u{1161}\u{11BC}"] {
            #expect(LookAlikes.folded(decomposed) == nil, "\(decomposed)")
        }
        #expect(LookAlikes.folded("b\u{1175}ll") == "blll")
        #expect(LookAlikes.folded("b\u{3163}ll") == "blll", "compatibility letters never join a block")
        #expect(Set(try identity("\u{C774}").similarityKeys).isDisjoint(with: try identity("ol").similarityKeys), "이 is not ol")
    }

    @Test("real Korean, Chinese and syllabics words stay valid and distinct from each other and from Latin names", arguments: [
        // Korean: Yi Sun-sin, Kim Cheol-su, love, Korea, we, child, cucumber, ieung, milk, Lee Lee, Seoul.
        ["\u{C774}\u{C21C}\u{C2E0}", "\u{AE40}\u{CCA0}\u{C218}", "\u{C0AC}\u{B791}", "\u{D55C}\u{AD6D}", "\u{C6B0}\u{B9AC}", "\u{C544}\u{C774}",
         "\u{C624}\u{C774}", "\u{C774}\u{C751}", "\u{C6B0}\u{C720}", "\u{C774}\u{C774}", "\u{C11C}\u{C6B8}"],
        // Chinese: China, Beijing, worker, population, lipstick, ethanol, girl, a mouthful, Japan, Yamaguchi, Zhang Yi.
        ["\u{4E2D}\u{56FD}", "\u{5317}\u{4EAC}", "\u{5DE5}\u{4EBA}", "\u{4EBA}\u{53E3}", "\u{53E3}\u{7EA2}", "\u{4E59}\u{9187}", "\u{4E2B}\u{5934}",
         "\u{4E00}\u{53E3}", "\u{65E5}\u{672C}", "\u{5C71}\u{53E3}", "\u{5F20}\u{4E00}"],
        // Syllabics: Inuktitut, Inuit, Nunavut, Iqaluit, uqausiq, Nehiyawewin, Anishinaabemowin.
        ["\u{1403}\u{14C4}\u{1483}\u{144E}\u{1450}\u{1466}", "\u{1403}\u{14C4}\u{1403}\u{1466}", "\u{14C4}\u{14C7}\u{1557}\u{1466}",
         "\u{1403}\u{1583}\u{14D7}\u{1403}\u{1466}", "\u{1405}\u{1583}\u{1405}\u{14EF}\u{1585}", "\u{14C0}\u{1426}\u{1403}\u{152D}\u{140D}\u{140F}\u{1423}",
         "\u{140A}\u{14C2}\u{1511}\u{14C8}\u{142F}\u{14A7}\u{140E}\u{14D0}"],
        latinNames,
    ])
    func distinctWords(_ words: [String]) throws {
        let identities = try words.map { word in try #require(try? identity(word), "\(word) is a valid name") }
        for (i, first) in identities.enumerated() {
            for second in identities[(i + 1)...] {
                #expect(Set(first.similarityKeys).isDisjoint(with: second.similarityKeys), "\(first.display) / \(second.display)")
            }
            for name in Self.latinNames where name != first.display {
                #expect(Set(first.similarityKeys).isDisjoint(with: try identity(name).similarityKeys), "\(first.display) / \(name)")
            }
        }
    }

    @Test("the key version names the table's size and content: any change re-keys the stores")
    func version() {
        let table = LookAlikes.table
        #expect(LookAlikes.version == LookAlikes.fingerprint(of: table))
        #expect(LookAlikes.version.hasPrefix("\(table.count)."))
        #expect(LookAlikes.fingerprint(of: Array(table.dropLast())) != LookAlikes.version)
        #expect(LookAlikes.fingerprint(of: Array(table.dropLast()) + [table[0]]) != LookAlikes.version, "same size, another entry")
        #expect(Usernames.keyVersion.contains("+look-alikes-\(LookAlikes.version)/"))
    }
}
