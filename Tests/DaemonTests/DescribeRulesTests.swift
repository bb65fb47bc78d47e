import CICU
import Foundation
import SignupProtocol
import Testing

/// A client that implements the username rules exactly as `describe` states them gets the
/// daemon's verdict: each tricky name is checked by `DescribedUsernameRule` (built from the
/// daemon's `rules` object, nothing hard-coded) and by the daemon's form.
@Suite("describe's username rules agree with the daemon")
struct DescribeRulesTests {
    static let names: [String] = [
        "alice", "Alice", "ａｌｉｃｅ", "bob smith", "bob!", "用户", "\u{01C5}emal",
        "\u{FDFA}",  // one letter whose NFKC_Casefold form has spaces
        String(repeating: "\u{FB03}", count: 13), String(repeating: "\u{FB03}", count: 14),  // 39 and 42 once folded
        String(repeating: "\u{1112}\u{1161}\u{11AB}", count: 39),  // 39 syllables sent decomposed: 351 bytes
        String(repeating: "\u{1112}\u{1161}\u{11AB}", count: 40),
        String(repeating: "\u{1100}", count: 85),  // one grapheme of 85 code points
        String(repeating: "用", count: 85), "\u{1100}" + String(repeating: "\u{1161}", count: 99),
        "\u{0939}\u{093F}\u{0928}\u{094D}\u{0926}\u{0940}", "\u{0BA4}\u{0BAE}\u{0BBF}\u{0BB4}\u{0BCD}",
        "\u{0E2A}\u{0E21}\u{0E28}\u{0E31}\u{0E01}\u{0E14}\u{0E34}\u{0E4C}", "\u{1EB9}\u{0300}",
        "za\u{0302}\u{0303}\u{0304}\u{0305}lgo", "za\u{0300}\u{0301}\u{0302}\u{0303}\u{0304}\u{0305}lgo",
        "\u{0301}abc", "1\u{0301}", "a\u{093F}",
        "\u{0639}\u{0640}\u{0644}\u{064A}", "\u{0640}", "\u{02BC}\u{02BC}", "\u{0E46}\u{0E46}", "\u{A717}\u{A717}", "\u{02D1}\u{02D1}",
        "\u{0639}\u{0644}\u{064A}123", "123\u{0639}\u{0644}\u{064A}", "\u{05D3}\u{05E0}\u{05D9}12", "12\u{05D3}\u{05E0}\u{05D9}",
        "\u{0639}\u{0644}\u{064A}\u{0661}\u{0662}",
        "\u{0130}stanbul", "i\u{0307}stanbul", "\u{0430}nn\u{0430}", "user\u{0661}\u{0662}", "\u{0430}\u{0440}\u{0435}",
        "dave\u{115F}", "bo\u{200D}b", "\u{3164}", "a\u{00AD}b",
    ]

    @Test("PROTOCOL.md's example of the username's rules is what describe sends")
    func documentedAsSent() throws {
        let client = try SharedDaemon.client()
        try client.send(Request(id: .string("d"), .describe(locale: nil)))
        let description = try client.next("description")
        let form = try #require(description["forms"]?.arrayValue?.first { $0.objectValue?["name"] == .string("signup") }?.objectValue)
        let field = try #require(form["fields"]?.arrayValue?.first { $0.objectValue?["name"] == .string("username") }?.objectValue)
        let root = SourceTree.root
        let protocolText = try String(contentsOf: root.appendingPathComponent("PROTOCOL.md"), encoding: .utf8)
        let after = try #require(protocolText.range(of: "The username's, for example:\n\n```json\n"), "PROTOCOL.md lost the example")
        let example = String(protocolText[after.upperBound...].prefix { $0 != "`" })
        let documented = try JSONParser.parse(Array(example.utf8))
        #expect(documented == field["rules"], "PROTOCOL.md documents \(example), describe sends \(String(describing: field["rules"]))")
    }

    @Test("every tricky name: describe's rules and the daemon say the same")
    func agree() throws {
        let client = try SharedDaemon.client()
        try client.send(Request(id: .string("d"), .describe(locale: nil)))
        let description = try client.next("description")
        let form = try #require(description["forms"]?.arrayValue?.first { $0.objectValue?["name"] == .string("signup") }?.objectValue)
        let field = try #require(form["fields"]?.arrayValue?.first { $0.objectValue?["name"] == .string("username") }?.objectValue)
        let rule = try DescribedUsernameRule(try #require(field["rules"]?.objectValue))

        for name in Self.names {
            // A fresh form each time: an unchanged validation is not sent again.
            let verdict = try SharedDaemon.client().signupVerdict(name)
            let daemonAccepts = verdict.string("state") == "ok"
            let reason = rule.refusal(of: name)
            #expect(
                daemonAccepts == (reason == nil),
                "\(name.unicodeScalars.map { String($0.value, radix: 16) }): daemon \(verdict), describe: \(reason ?? "valid")"
            )
        }
    }
}

/// The username rule as `describe` states it, implemented as a third-party client would:
/// every member of `rules` is read, unknown members make it give up.
struct DescribedUsernameRule {
    let minCharacters: Int
    let maxCharacters: Int
    let maxBytes: Int
    let maxInputBytes: Int
    let forms: [String]
    let allowed: Set<String>
    let refusedProperties: [String]
    let refusedCodePoints: Set<UInt32>
    let required: Set<String>
    let marksAfterLetterOfScript: Bool
    let maxMarks: Int
    let maxCodePoints: Int
    let bidiRule: Bool
    let scriptRestriction: Bool

    struct Unsupported: Error { let member: String }

    init(_ rules: JSONObject) throws {
        let known: Set<String> = [
            "minCharacters", "maxCharacters", "maxBytes", "maxInputBytes", "normalization", "appliesTo", "allowedCategories",
            "refusedProperties",
            "refusedCodePoints", "requiredCategories", "combiningMarks", "maxMarksPerCharacter", "maxCodePointsPerCharacter",
            "bidiRule", "scriptRestriction", "identity", "confusables", "unicodeVersion",
        ]
        if let unknown = rules.members.first(where: { !known.contains($0.key) }) { throw Unsupported(member: unknown.key) }
        func int(_ key: String) throws -> Int { Int(try #require(rules[key]?.int64Value, "describe states \(key)")) }
        func strings(_ key: String) -> [String] { rules[key]?.arrayValue?.compactMap(\.stringValue) ?? [] }
        minCharacters = rules["minCharacters"]?.int64Value.map { Int($0) } ?? 1
        maxCharacters = try int("maxCharacters")
        maxBytes = try int("maxBytes")
        maxInputBytes = try int("maxInputBytes")
        maxMarks = try int("maxMarksPerCharacter")
        maxCodePoints = try int("maxCodePointsPerCharacter")
        forms = strings("appliesTo")
        allowed = Set(strings("allowedCategories"))
        refusedProperties = strings("refusedProperties")
        refusedCodePoints = Set(strings("refusedCodePoints").compactMap { UInt32($0.dropFirst(2), radix: 16) })
        required = Set(strings("requiredCategories"))
        marksAfterLetterOfScript = rules["combiningMarks"] == .string("after-letter-of-its-script")
        bidiRule = rules["bidiRule"] == .string("RFC5893")
        scriptRestriction = rules["scriptRestriction"] != nil
        guard rules["normalization"] == .string("NFC"), rules["identity"] == .string("NFKC_Casefold"),
            refusedProperties.allSatisfy({ $0 == "Default_Ignorable_Code_Point" })
        else { throw Unsupported(member: "normalization/identity/refusedProperties") }
    }

    /// Why describe's rules refuse a name; nil when they accept it.
    func refusal(of name: String) -> String? {
        if name.utf8.count > maxInputBytes { return "maxInputBytes" }
        let nfc = ICUText.nfc(name)
        let key = ICUText.nfkcCasefold(nfc)
        for form in forms {
            let text = form == "NFC" ? nfc : key
            if let why = refusal(form: text) { return "\(form): \(why)" }
        }
        if scriptRestriction && signupdSpoofCheck(key) != 0 { return "scriptRestriction" }
        return nil
    }

    private func refusal(form text: String) -> String? {
        if text.utf8.count > maxBytes { return "maxBytes" }
        if text.isEmpty { return "empty" }
        var base: Int32?
        var hasRequired = false
        var hasRTL = false
        for scalar in text.unicodeScalars {
            if scalar.properties.isDefaultIgnorableCodePoint { return "refusedProperties" }
            if refusedCodePoints.contains(scalar.value) { return "refusedCodePoints" }
            let category = Self.abbreviation(scalar.properties.generalCategory)
            if !allowed.contains(category) { return "allowedCategories \(category)" }
            if required.contains(category) { hasRequired = true }
            if [1, 5, 13].contains(signupd_bidi_class(Int32(scalar.value))) { hasRTL = true }
            switch category {
            case "Lu", "Ll", "Lt", "Lm", "Lo": base = signupd_script(Int32(scalar.value))
            case "Mn", "Mc":
                guard marksAfterLetterOfScript, let base else { return "combiningMarks" }
                let script = signupd_script(Int32(scalar.value))
                if script != 0 && script != 1 && signupd_has_script(Int32(scalar.value), base) == 0 { return "combiningMarks script" }
            default: base = nil
            }
        }
        if !hasRequired { return "requiredCategories" }
        for character in text {
            let marks = character.unicodeScalars.filter { ["Mn", "Mc", "Me"].contains(Self.abbreviation($0.properties.generalCategory)) }.count
            if marks > maxMarks { return "maxMarksPerCharacter" }
            if character.unicodeScalars.count > maxCodePoints { return "maxCodePointsPerCharacter" }
        }
        if text.count < minCharacters { return "minCharacters" }
        if text.count > maxCharacters { return "maxCharacters" }
        if bidiRule && hasRTL && !Self.passesRFC5893(text) { return "bidiRule" }
        return nil
    }

    /// RFC 5893 section 2, rules 1 to 6, from Bidi_Class values.
    static func passesRFC5893(_ text: String) -> Bool {
        let (l, r, en, es, et, an, cs, on, al, nsm, bn): (Int32, Int32, Int32, Int32, Int32, Int32, Int32, Int32, Int32, Int32, Int32) =
            (0, 1, 2, 3, 4, 5, 6, 10, 13, 17, 18)
        let classes = text.unicodeScalars.map { signupd_bidi_class(Int32($0.value)) }
        guard let first = classes.first, [l, r, al].contains(first) else { return false }
        let last = classes.last { $0 != nsm } ?? first
        if first == l {
            return classes.allSatisfy { [l, en, es, cs, et, on, bn, nsm].contains($0) } && [l, en].contains(last)
        }
        return classes.allSatisfy { [r, al, an, en, es, cs, et, on, bn, nsm].contains($0) }
            && [r, al, en, an].contains(last) && !(classes.contains(en) && classes.contains(an))
    }

    static func abbreviation(_ category: Unicode.GeneralCategory) -> String {
        switch category {
        case .uppercaseLetter: "Lu"
        case .lowercaseLetter: "Ll"
        case .titlecaseLetter: "Lt"
        case .modifierLetter: "Lm"
        case .otherLetter: "Lo"
        case .nonspacingMark: "Mn"
        case .spacingMark: "Mc"
        case .enclosingMark: "Me"
        case .decimalNumber: "Nd"
        default: "other"
        }
    }
}

/// NFC and NFKC_Casefold through ICU, as a client of describe would compute them.
enum ICUText {
    static func nfc(_ text: String) -> String { apply(signupd_nfc, text) }
    static func nfkcCasefold(_ text: String) -> String { apply(signupd_nfkc_casefold, text) }

    private static func apply(_ transform: (UnsafePointer<UInt16>?, Int32, UnsafeMutablePointer<UInt16>?, Int32) -> Int32, _ text: String) -> String {
        let source = Array(text.utf16)
        var output = [UInt16](repeating: 0, count: source.count * 18 + 16)
        let length = source.withUnsafeBufferPointer { input in
            output.withUnsafeMutableBufferPointer { transform(input.baseAddress, Int32(input.count), $0.baseAddress, Int32($0.count)) }
        }
        return String(decoding: output[..<max(0, Int(length))], as: UTF16.self)
    }
}

func signupdSpoofCheck(_ text: String) -> Int32 {
    let units = Array(text.utf16)
    return units.withUnsafeBufferPointer { signupd_spoof_check($0.baseAddress, Int32($0.count)) }
}
