/// One character that people read as a Latin letter although UTS #39's skeleton leaves it
/// apart from that letter: a letter of a script that may be mixed with Latin in a username
/// (Hangul, Han, Bopomofo), of a whole script that imitates Latin (Canadian syllabics), or a
/// Latin or IPA letter UTS #39 folds to something else or to nothing.
public struct LookAlike: Sendable {
    /// Where an entry comes from. Every entry names at least one.
    public enum Source: Sendable, Equatable {
        /// A pair the hostile tester of issue 27 (item 7) signed up as two accounts.
        case issue27
        /// UTS #39's confusables.txt puts the character in a class whose prototype is this
        /// character, a class with no Latin letter (read from ICU 72's uspoof data, the same
        /// table as PyPI's confusable_homoglyphs 3.3.1 and homoglyphs 2.0.4).
        case uts39Class(Unicode.Scalar)
        /// A "fancy text" alphabet of text-styling tools, which writes each Latin letter
        /// with a look-alike of another script; the one named, in A-to-Z order:
        /// - `blocky`: 卂乃匚ᗪ乇千Ꮆ卄丨ﾌҜㄥ爪几ㄖ卩Ɋ尺丂ㄒㄩᐯ山乂ㄚ乙 (also "Asian style", with
        ///   工 for I, 丅 for T, 凵 for U, 丫 for Y);
        /// - `bubbly`: ᗩᗷᑕᗪEᖴGᕼIᒍKᒪᗰᑎOᑭᑫᖇᔕTᑌᐯᗯ᙭Yᘔ (also with ᗴ for E, ᘜ for G);
        /// - `swirly`: αႦƈԃҽϝɠԋιʝƙʅɱɳσρϙɾʂƚυʋɯxყȥ;
        /// - `hangulLatin`: ΛBᄃDΣFGΉIJKᄂMПӨPQЯƧƬЦVЩXYZ, and the kana one with ᄃ for C, ɛ for E.
        case fancyText(Alphabet)
        /// A Latin letter with a hook, curl, tail, belt, bar or stroke: UTS #39 folds most of
        /// these to the bare letter (ƙ ɓ ɗ ɠ ɦ ɳ ʂ ɫ ɭ ƚ ł đ ħ ŧ ƀ ɨ ɇ ɉ ...), not this one; the
        /// username rule already reads diacritics as the bare letter.
        case barredOrHookedLetter
        /// The conjoining (jamo) or halfwidth form of a Hangul letter that has an entry:
        /// NFKC_Casefold turns the letter typed as ㅣ into ᅵ, and ￜ into ᅵ.
        case hangulForm(of: Unicode.Scalar)
        /// Our reading, where no list has the pair: the glyph is the letter's shape in
        /// common fonts (ㅜ a T, ㅌ an E).
        case shape
    }

    /// The fancy-text alphabets `Source.fancyText` names.
    public enum Alphabet: String, Sendable, Equatable {
        case blocky, bubbly, swirly, hangulLatin
    }

    /// The look-alike, as it is after NFD.
    public let character: Unicode.Scalar
    /// The Latin letter it is read as (one letter; its own skeleton is UTS #39's).
    public let latin: Character
    public let sources: [Source]

    init(_ character: Unicode.Scalar, _ latin: Character, _ sources: Source...) {
        self.character = character
        self.latin = latin
        self.sources = sources
    }
}

/// The look-alikes signupd folds beyond UTS #39, in one table. `Usernames.similarityKeys`
/// adds, for each form of a name with one of these characters, the similarity key of the
/// form with each replaced by its Latin letter; the UTS #39 key stays one of the keys too,
/// so the table only ever adds refusals. Hangul conjoining jamo are folded only where they
/// stand alone (`LookAlikes.folded`): inside a syllable block (이, 한) they are not letters
/// anyone reads as Latin. Changing the table changes `Usernames.keyVersion`, and stores
/// recompute every account's keys at the next start.
///
/// Deliberately not folded: 一 ㅡ ー (a dash, and no username has one), Han characters
/// common in words (山 千 几 尺 丁 乃 長 from the same alphabets), katakana (ロ エ fold to
/// 口 工 under UTS #39 and so to their Han twins, not to Latin).
public enum LookAlikes {
    public static let table: [LookAlike] = [
        // Latin and IPA letters UTS #39 leaves alone or folds to a non-Latin prototype.
        LookAlike("\u{0237}", "j", .issue27, .uts39Class("\u{0237}")),  // ȷ dotless j
        LookAlike("\u{0138}", "k", .issue27, .uts39Class("\u{0138}")),  // ĸ kra, the class of κ ᴋ к
        LookAlike("\u{028B}", "v", .issue27, .fancyText(.swirly)),  // ʋ v with hook (UTS #39: u, kept too)
        LookAlike("\u{0188}", "c", .fancyText(.swirly), .barredOrHookedLetter),  // ƈ c with hook
        LookAlike("\u{029D}", "j", .fancyText(.swirly), .barredOrHookedLetter),  // ʝ j with crossed-tail
        LookAlike("\u{027E}", "r", .fancyText(.swirly)),  // ɾ r with fishhook
        LookAlike("\u{025B}", "e", .fancyText(.hangulLatin)),  // ɛ open e (UTS #39: ꞓ, kept too)
        LookAlike("\u{0272}", "n", .barredOrHookedLetter),  // ɲ n with left hook
        LookAlike("\u{0288}", "t", .barredOrHookedLetter),  // ʈ t with retroflex hook
        LookAlike("\u{0236}", "t", .barredOrHookedLetter),  // ȶ t with curl
        LookAlike("\u{0221}", "d", .barredOrHookedLetter),  // ȡ d with curl
        LookAlike("\u{0235}", "n", .barredOrHookedLetter),  // ȵ n with curl
        LookAlike("\u{0234}", "l", .barredOrHookedLetter),  // ȴ l with curl
        LookAlike("\u{026C}", "l", .barredOrHookedLetter),  // ɬ l with belt
        LookAlike("\u{0289}", "u", .barredOrHookedLetter),  // ʉ u bar
        LookAlike("\u{028A}", "u", .shape),  // ʊ Latin upsilon
        LookAlike("\u{01BF}", "p", .uts39Class("\u{00FE}"), .shape),  // ƿ wynn, the class of þ

        // Hangul: compatibility letters (never joined into a block), their conjoining and
        // halfwidth forms (standalone only).
        LookAlike("\u{3163}", "l", .issue27, .uts39Class("\u{4E28}")),  // ㅣ
        LookAlike("\u{1175}", "l", .hangulForm(of: "\u{3163}")),  // ᅵ
        LookAlike("\u{FFDC}", "l", .hangulForm(of: "\u{3163}")),  // ￜ
        LookAlike("\u{3147}", "o", .issue27, .uts39Class("\u{110B}")),  // ㅇ
        LookAlike("\u{110B}", "o", .hangulForm(of: "\u{3147}")),  // ᄋ
        LookAlike("\u{11BC}", "o", .hangulForm(of: "\u{3147}")),  // ᆼ
        LookAlike("\u{FFB7}", "o", .hangulForm(of: "\u{3147}")),  // ﾷ
        LookAlike("\u{3134}", "L", .fancyText(.hangulLatin)),  // ㄴ
        LookAlike("\u{1102}", "L", .hangulForm(of: "\u{3134}")),  // ᄂ
        LookAlike("\u{11AB}", "L", .hangulForm(of: "\u{3134}")),  // ᆫ
        LookAlike("\u{FFA4}", "L", .hangulForm(of: "\u{3134}")),  // ﾤ
        LookAlike("\u{3137}", "C", .fancyText(.hangulLatin)),  // ㄷ
        LookAlike("\u{1103}", "C", .hangulForm(of: "\u{3137}")),  // ᄃ
        LookAlike("\u{11AE}", "C", .hangulForm(of: "\u{3137}")),  // ᆮ
        LookAlike("\u{FFA7}", "C", .hangulForm(of: "\u{3137}")),  // ﾧ
        LookAlike("\u{315C}", "T", .shape),  // ㅜ
        LookAlike("\u{116E}", "T", .hangulForm(of: "\u{315C}")),  // ᅮ
        LookAlike("\u{FFD3}", "T", .hangulForm(of: "\u{315C}")),  // ￓ
        LookAlike("\u{314C}", "E", .shape),  // ㅌ
        LookAlike("\u{1110}", "E", .hangulForm(of: "\u{314C}")),  // ᄐ
        LookAlike("\u{11C0}", "E", .hangulForm(of: "\u{314C}")),  // ᇀ
        LookAlike("\u{FFBC}", "E", .hangulForm(of: "\u{314C}")),  // ﾼ

        // Han strokes and radicals, rare in words, that the alphabets use as Latin letters.
        LookAlike("\u{4E28}", "l", .issue27, .fancyText(.blocky), .uts39Class("\u{4E28}")),  // 丨 (also ㅣ ᅵ ⼁ ㇑)
        LookAlike("\u{5DE5}", "I", .fancyText(.blocky), .uts39Class("\u{5DE5}")),  // 工 (also エ ⼯)
        LookAlike("\u{53E3}", "O", .fancyText(.blocky), .uts39Class("\u{53E3}")),  // 口 (also ロ ⼝ 囗)
        LookAlike("\u{56D7}", "O", .uts39Class("\u{53E3}")),  // 囗
        LookAlike("\u{4E59}", "Z", .fancyText(.blocky)),  // 乙
        LookAlike("\u{4E42}", "X", .fancyText(.blocky)),  // 乂
        LookAlike("\u{5344}", "H", .fancyText(.blocky)),  // 卄
        LookAlike("\u{51F5}", "U", .fancyText(.blocky)),  // 凵
        LookAlike("\u{531A}", "C", .fancyText(.blocky)),  // 匚
        LookAlike("\u{4E2B}", "Y", .fancyText(.blocky)),  // 丫
        LookAlike("\u{5342}", "A", .fancyText(.blocky)),  // 卂
        LookAlike("\u{4E47}", "E", .fancyText(.blocky)),  // 乇
        LookAlike("\u{4E05}", "T", .fancyText(.blocky)),  // 丅
        LookAlike("\u{5369}", "P", .fancyText(.blocky)),  // 卩

        // Bopomofo (Latin + Han + Bopomofo is a permitted mix).
        LookAlike("\u{3125}", "L", .fancyText(.blocky)),  // ㄥ
        LookAlike("\u{3116}", "O", .fancyText(.blocky)),  // ㄖ
        LookAlike("\u{3112}", "T", .fancyText(.blocky)),  // ㄒ
        LookAlike("\u{3129}", "U", .fancyText(.blocky)),  // ㄩ
        LookAlike("\u{311A}", "Y", .fancyText(.blocky)),  // ㄚ

        // Canadian syllabics UTS #39 does not fold to Latin (it does ᑭ ᑌ ᐯ ᑲ ᑯ ᒍ ᒪ ᗪ ᖴ ᕼ ᗰ ᖇ ᗷ).
        LookAlike("\u{1424}", "o", .issue27),  // ᐤ final ring
        LookAlike("\u{15E9}", "A", .fancyText(.bubbly)),  // ᗩ
        LookAlike("\u{1455}", "C", .fancyText(.bubbly)),  // ᑕ (UTS #39: ⊂)
        LookAlike("\u{146B}", "Q", .fancyText(.bubbly)),  // ᑫ
        LookAlike("\u{1515}", "S", .fancyText(.bubbly)),  // ᔕ
        LookAlike("\u{15EF}", "W", .fancyText(.bubbly)),  // ᗯ (UTS #39: ѡ, kept too)
        LookAlike("\u{1614}", "Z", .fancyText(.bubbly)),  // ᘔ
        LookAlike("\u{144E}", "n", .fancyText(.bubbly)),  // ᑎ (UTS #39: Armenian ո, kept too)
        LookAlike("\u{15F4}", "E", .fancyText(.bubbly)),  // ᗴ
        LookAlike("\u{161C}", "G", .fancyText(.bubbly)),  // ᘜ
    ]
}
