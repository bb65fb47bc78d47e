import Testing
import UsernameIdentity

@Test func probe() {
    let names = ["한국", "\u{1112}\u{1161}\u{11AB}\u{1100}\u{116E}\u{11A8}", "\u{03AC}", "\u{1F71}", "\u{8C48}", "\u{F900}", "οδυσσευς", "οδυσσευσ", "straße", "strasse", "ſam", "sam",
      "alice", "ａｌｉｃｅ", "bob", "𝐛𝐨𝐛", "anna", "аnnа", "user12", "user١٢", "dave\u{115F}", "carol\u{3164}", "\u{3164}", "admin" + String(repeating: "\u{1160}", count: 21000),
      "kelvin", "\u{212A}elvin", "\u{212B}sa", "\u{00C5}sa", "ﬁsh", "fish", "İstanbul", "i\u{307}stanbul", "ılgaz", "ilgaz", "user１２", "ape", "аре", "scope", "ѕсоре", "modern", "rnodern", "pool", "poo1",
      "alice\u{202E}", "bo\u{200D}b", "üser", "u\u{308}ser", "用户", "ǆemal", "džemal", "ｶﾀｶﾅ", "カタカナ", "ℍ𝕖𝕝𝕝𝕠", "hello", "ocean", "οcean", "paypal", "pаypal", "bob\u{FE0F}", "ﷺ", "ㅎㅏㄴ", "١٢٣", "123", "user0", "usero", "ad\u{AD}min", "vvv", "www", "cl", "d"]
    for name in names {
        switch Usernames.identity(of: name) {
        case .success(let id): print("PROBE \(name.unicodeScalars.map { String($0.value, radix: 16) }.prefix(8)) key=\(id.key) skel=\(id.skeleton)")
        case .failure(let e): print("PROBE \(name.unicodeScalars.map { String($0.value, radix: 16) }.prefix(8)) \(e)")
        }
    }
    print("PROBE", Usernames.keyVersion, Usernames.icuVersion)
    #expect(Usernames.unicodeVersion == "15.0")
}
