import Testing

/// Pairs of usernames a hostile user would try as "the same name". For each, the first is
/// signed up; the second must then be either the same account (availability says taken,
/// login with either spelling works) or refused with the documented message. Never a
/// second account.
struct IdentityPair: Sendable, CustomTestStringConvertible {
    enum Outcome: Sendable, Equatable {
        /// The second spelling is the first's account.
        case sameAccount
        /// The second spelling is refused by the character rule with this message (the
        /// login form refuses it too).
        case refusedByRule(String)
        /// The second spelling passes the rule but its name is too similar to the first's.
        case tooSimilar
    }

    let what: String
    let first: String
    let second: String
    let outcome: Outcome

    var testDescription: String { what }

    static let invalid = "Username can only contain letters or digits"
    static let invisible = "Username cannot contain invisible characters"
    static let mixed = "Username mixes scripts or number systems"
    static let tooManyBytes = "Username must be at most 255 bytes"
    static let taken = "Username already taken"
    static let similar = "Username is too similar to an existing one"

    static let all: [IdentityPair] = [
        // Canonically equal (NFC).
        .init(what: "Hangul syllables / conjoining jamo", first: "\u{D55C}\u{AD6D}", second: "\u{1112}\u{1161}\u{11AB}\u{1100}\u{116E}\u{11A8}", outcome: .sameAccount),
        .init(what: "ά U+03AC / U+1F71", first: "\u{03AC}λφα", second: "\u{1F71}λφα", outcome: .sameAccount),
        .init(what: "豈 U+8C48 / U+F900", first: "\u{8C48}", second: "\u{F900}", outcome: .sameAccount),
        .init(what: "Kelvin sign K U+212A / k", first: "kelvin", second: "\u{212A}elvin", outcome: .sameAccount),
        .init(what: "Å U+00C5 / angstrom sign U+212B", first: "\u{00C5}sa", second: "\u{212B}sa", outcome: .sameAccount),
        .init(what: "üser precomposed / decomposed", first: "\u{00FC}ser", second: "u\u{0308}ser", outcome: .sameAccount),
        .init(what: "zoë precomposed / decomposed", first: "zo\u{00EB}", second: "zoe\u{0308}", outcome: .sameAccount),
        // Compatibility equal (NFKC).
        .init(what: "ſ long s / s", first: "sam", second: "\u{017F}am", outcome: .sameAccount),
        .init(what: "alice / fullwidth ａｌｉｃｅ", first: "alice", second: "ａｌｉｃｅ", outcome: .sameAccount),
        .init(what: "bob / mathematical bold 𝐛𝐨𝐛", first: "bob", second: "𝐛𝐨𝐛", outcome: .sameAccount),
        .init(what: "hello / double-struck ℍ𝕖𝕝𝕝𝕠", first: "hello", second: "ℍ𝕖𝕝𝕝𝕠", outcome: .sameAccount),
        .init(what: "ﬁ ligature / fi", first: "fish", second: "\u{FB01}sh", outcome: .sameAccount),
        .init(what: "ﬀ ligature / ff", first: "staff", second: "sta\u{FB00}", outcome: .sameAccount),
        .init(what: "fullwidth digits", first: "user34", second: "user\u{FF13}\u{FF14}", outcome: .sameAccount),
        .init(what: "dž digraph U+01C6 / d + ž", first: "d\u{017E}emal", second: "\u{01C6}emal", outcome: .sameAccount),
        .init(what: "halfwidth / fullwidth katakana", first: "カタカナ", second: "ｶﾀｶﾅ", outcome: .sameAccount),
        // Case folding (full, not lowercased()).
        .init(what: "final sigma ς / σ", first: "οδυσσευς", second: "οδυσσευσ", outcome: .sameAccount),
        .init(what: "capital sigma / final sigma", first: "ΣΟΦΟΣ", second: "σοφος", outcome: .sameAccount),
        .init(what: "ß / ss", first: "stra\u{00DF}e", second: "strasse", outcome: .sameAccount),
        .init(what: "mixed case", first: "Mallory", second: "mALLORY", outcome: .sameAccount),
        .init(what: "upper / lower", first: "OSCAR", second: "oscar", outcome: .sameAccount),
        .init(what: "the very same name", first: "用户", second: "用户", outcome: .sameAccount),
        // Turkish i.
        .init(what: "İ U+0130 / i + combining dot U+0307", first: "\u{0130}stanbul", second: "i\u{0307}stanbul", outcome: .refusedByRule(invalid)),
        .init(what: "dotless ı / i", first: "ilgaz", second: "\u{0131}lgaz", outcome: .tooSimilar),
        // Look-alikes: mixed scripts are refused by the rule, whole-script ones are too similar.
        .init(what: "anna / Cyrillic а in аnnа", first: "anna", second: "\u{0430}nn\u{0430}", outcome: .refusedByRule(mixed)),
        .init(what: "paypal / Cyrillic а", first: "paypal", second: "p\u{0430}ypal", outcome: .refusedByRule(mixed)),
        .init(what: "ocean / Greek ο", first: "ocean", second: "\u{03BF}cean", outcome: .refusedByRule(mixed)),
        .init(what: "user12 / Arabic-Indic digits", first: "user12", second: "user\u{0661}\u{0662}", outcome: .refusedByRule(mixed)),
        .init(what: "ape / all-Cyrillic аре", first: "ape", second: "\u{0430}\u{0440}\u{0435}", outcome: .tooSimilar),
        .init(what: "scope / all-Cyrillic ѕсоре", first: "scope", second: "\u{0455}\u{0441}\u{043E}\u{0440}\u{0435}", outcome: .tooSimilar),
        .init(what: "coco / all-Cyrillic сосо", first: "coco", second: "\u{0441}\u{043E}\u{0441}\u{043E}", outcome: .tooSimilar),
        .init(what: "m / rn", first: "modern", second: "rnodern", outcome: .tooSimilar),
        .init(what: "l / 1", first: "pool", second: "poo1", outcome: .tooSimilar),
        // Invisible and default-ignorable code points.
        .init(what: "Hangul choseong filler U+115F", first: "dave", second: "dave\u{115F}", outcome: .refusedByRule(invisible)),
        .init(what: "Hangul filler U+3164", first: "carol", second: "carol\u{3164}", outcome: .refusedByRule(invisible)),
        .init(what: "a name that is only U+3164", first: "carolyn", second: "\u{3164}", outcome: .refusedByRule(invisible)),
        .init(what: "Hangul jungseong filler U+1160", first: "victor", second: "victor\u{1160}", outcome: .refusedByRule(invisible)),
        .init(what: "halfwidth Hangul filler U+FFA0", first: "walter", second: "walter\u{FFA0}", outcome: .refusedByRule(invisible)),
        .init(what: "RTL override U+202E", first: "eve", second: "eve\u{202E}", outcome: .refusedByRule(invisible)),
        .init(what: "LTR override U+202D", first: "trent", second: "\u{202D}trent", outcome: .refusedByRule(invisible)),
        .init(what: "ZWJ inside a name", first: "frank", second: "fr\u{200D}ank", outcome: .refusedByRule(invisible)),
        .init(what: "ZWNJ inside a name", first: "grace", second: "gr\u{200C}ace", outcome: .refusedByRule(invisible)),
        .init(what: "zero-width space", first: "heidi", second: "he\u{200B}idi", outcome: .refusedByRule(invisible)),
        .init(what: "word joiner U+2060", first: "peggy", second: "peggy\u{2060}", outcome: .refusedByRule(invisible)),
        .init(what: "variation selector U+FE0F", first: "ivan", second: "ivan\u{FE0F}", outcome: .refusedByRule(invisible)),
        .init(what: "soft hyphen U+00AD", first: "judy", second: "ju\u{00AD}dy", outcome: .refusedByRule(invisible)),
        .init(what: "combining grapheme joiner U+034F", first: "xavier", second: "xavier\u{034F}", outcome: .refusedByRule(invisible)),
        .init(what: "Mongolian vowel separator U+180E", first: "yolanda", second: "yolanda\u{180E}", outcome: .refusedByRule(invisible)),
        // Size.
        .init(what: "admin + 21,000 × U+1160 (63,005 bytes)", first: "admin", second: "admin" + String(repeating: "\u{1160}", count: 21_000), outcome: .refusedByRule(tooManyBytes)),
        .init(what: "one grapheme of 100 jamo (300 bytes)", first: "gim", second: "\u{1100}" + String(repeating: "\u{1161}", count: 99), outcome: .refusedByRule(tooManyBytes)),
    ]
}
