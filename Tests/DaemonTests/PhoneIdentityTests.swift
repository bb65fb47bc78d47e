import Foundation
import GRDB
import SignupProtocol
import Testing

/// One phone number is one account, however a person writes it (RxLoginTest's users type
/// their mobile number the way they write it): every spelling of a number signs up no second
/// account and logs in to the first, on every store, through the real daemon over its socket.
@Suite("A phone number is one account: every spelling, every store")
struct PhoneIdentityTests {
    static let password = "phone secret 1"

    /// A number and the ways people write it; the first signs up.
    struct Number: CustomStringConvertible, Sendable {
        let e164: String
        let spellings: [String]
        var description: String { e164 }
    }

    /// A fresh Chinese mobile number (13X then eight digits) written 13 ways.
    static func chineseMobile() -> Number {
        let digits = "13" + String(UInt64.random(in: 100_000_000...999_999_999))
        let (a, b, c) = (digits.prefix(3), digits.dropFirst(3).prefix(4), digits.suffix(4))
        return Number(e164: "+86" + digits, spellings: [
            digits,
            "+86 \(a) \(b) \(c)",
            "0086 \(a) \(b) \(c)",
            "+86-\(a)-\(b)-\(c)",
            "(+86) \(digits)",
            "+86 (\(a)) \(b)-\(c)",
            "86 \(a) \(b) \(c)",
            "\(a).\(b).\(c)",
            "\(a)\u{3000}\(b)\u{3000}\(c)",  // ideographic spaces, as a Chinese input method types them
            "\(a)\u{2013}\(b)\u{2013}\(c)",  // en dashes
            fullWidth(digits),
            "\u{FF0B}\(fullWidth("86")) \(fullWidth(digits))",  // ＋８６ and full-width digits
            arabicIndic(digits),
        ])
    }

    static func fullWidth(_ text: some StringProtocol) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.map { ("0"..."9").contains($0) ? Unicode.Scalar($0.value - 0x30 + 0xFF10)! : $0 }))
    }

    static func arabicIndic(_ text: some StringProtocol) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.map { ("0"..."9").contains($0) ? Unicode.Scalar($0.value - 0x30 + 0x0660)! : $0 }))
    }

    /// Five numbers, 60 spellings: four Chinese mobiles and a British one (another
    /// country's number, written internationally, as any region's form takes it).
    static let numbers: [Number] = (0..<4).map { _ in chineseMobile() } + [
        Number(e164: "+447911123456", spellings: ["+44 7911 123456", "0044 7911 123456", "+44 (7911) 123-456", fullWidth("+44 7911123456")]),
    ]

    @Test("each spelling is the same account: no second signup, and each logs in", arguments: StoreUnderTest.allCases, numbers)
    func oneAccount(store: StoreUnderTest, number: Number) throws {
        let daemon = try DaemonPerStore.get("phones", store)
        let first = try daemon.connect()
        _ = try first.hello()
        let signedUp = try first.phoneSignup(number.spellings[0], Self.password)
        try #require(signedUp["ok"] == .bool(true), "the first spelling signs up: \(signedUp)")
        #expect(signedUp.string("user") == "tel:" + number.e164, "the identity is the E.164 form")
        for spelling in number.spellings {
            // A connection per spelling: two forms each, within a connection's sessions.
            let client = try daemon.connect()
            _ = try client.hello()
            let verdict = try client.phoneSignupVerdict(spelling)
            #expect(verdict.string("messageId") == "phone.taken", "\(spelling) is the same number: \(verdict)")
            let login = try client.phoneLogin(spelling, Self.password)
            #expect(login["ok"] == .bool(true) && login.string("user") == "tel:" + number.e164, "\(spelling) logs in: \(login)")
        }
    }

    @Test("what cannot be a phone number says why, in English and Chinese", arguments: [
        ("138abc45678", "phone.invalid", "号码格式错误"),
        ("+999 1234 5678", "phone.invalid_country", "国家或地区代码无效"),
        ("123 4567 8901", "phone.impossible", "该号码不存在"),
        ("+1 800 555 0199", "phone.unsupported_type", "仅支持手机或固定电话号码"),
        ("1380013800", "phone.too_short", "号码长度不足"),
        ("+86 138 0013 8000 12345", "phone.too_long", "号码过长"),
        ("1380013800012", "phone.too_long", "号码过长"),
        ("1", "phone.too_short", "号码长度不足"),  // the first keystroke is not a format error
        ("400 123 4567", "phone.unsupported_type", "仅支持手机或固定电话号码"),
        (String(repeating: "1", count: 129), "phone.too_long", "号码过长"),
    ])
    func refused(_ value: String, _ id: String, _ chinese: String) throws {
        let client = try SharedDaemon.client()
        _ = try client.open("phone-login")
        let english = try #require(try client.set("phone", value).last { $0.event == "validation" })
        #expect(english.string("state") == "failed" && english.string("messageId") == id, "\(value): \(english)")
        try client.send(Request(id: .string("zh"), .locale(session: nil, locale: "zh-CN")))
        let snapshot = try client.next(where: { $0.string("event") == "busy" }).before
        let shown = try #require(snapshot.last { $0.event == "validation" && $0.string("field") == "phone" })
        #expect(shown.string("message") == chinese, "\(value) in zh-CN: \(shown)")
    }

    @Test("numbers as they arrive pasted or written with brackets are numbers; a landline of the region is one", arguments: [
        "\u{202A}+86 139 0013 9000\u{202C}",  // a contacts app's bidi embedding
        "\u{FEFF}13900139000", "139\u{200B}0013\u{00AD}9000", "\u{200E}+86 13900139000",
        "[139]00139000", "\u{FF3B}139\u{FF3D}0013 9000", "010 6552 9988", "+86 10 6552 9988", "021 6321 1234",
    ])
    func accepted(_ value: String) throws {
        let client = try SharedDaemon.client()
        _ = try client.open("phone-login")
        let shown = try #require(try client.set("phone", value).last { $0.event == "validation" })
        #expect(shown.string("state") == "ok", "\(value.unicodeScalars.map { String($0.value, radix: 16) }): \(shown)")
    }

    @Test("the login limiter counts one number once, however it is written", arguments: StoreUnderTest.allCases)
    func limiter(store: StoreUnderTest) throws {
        let number = Self.chineseMobile()
        let client = try DaemonPerStore.get("phone-limiter", store, arguments: ["--login-attempts-per-minute", "3"]).connect()
        _ = try client.hello()
        #expect(try client.phoneSignup(number.spellings[0], Self.password)["ok"] == .bool(true))
        for spelling in number.spellings.prefix(3) {
            #expect(try client.phoneLogin(spelling, "wrong password")["messageId"] == .string("phone.invalid_credentials"))
        }
        let fourth = try client.phoneLogin(number.spellings[3], Self.password)
        #expect(fourth["messageId"] == .string("login.rate_limited"), "a fourth spelling is the same number: \(fourth)")
    }
}

extension LineClient {
    /// Signs up on `phone-signup`; returns the result, or the failed validation.
    func phoneSignup(_ phone: String, _ password: String) throws -> JSONObject {
        let verdict = try phoneSignupVerdict(phone)
        guard verdict.string("state") == "ok" else { return verdict }
        _ = try set("password", password)
        try send(Request(id: .string("submit"), .submit(session: nil)))
        return try next("result")
    }

    /// The phone field's availability answer (or rule failure) in a fresh `phone-signup`.
    func phoneSignupVerdict(_ phone: String) throws -> JSONObject {
        _ = try open("phone-signup")
        try send(Request(.set(session: nil, field: "phone", value: phone)))
        return try next { $0.event == "validation" && $0.string("field") == "phone" && ["ok", "failed"].contains($0.string("state")) }.match
    }

    /// Logs in on `phone-login`; returns the result, or the failed validation.
    func phoneLogin(_ phone: String, _ password: String) throws -> JSONObject {
        _ = try open("phone-login")
        let afterPhone = try set("phone", phone)
        if let failed = afterPhone.last(where: { $0.event == "validation" && $0.string("state") == "failed" }) { return failed }
        _ = try set("password", password)
        try send(Request(id: .string("submit"), .submit(session: nil)))
        return try next("result")
    }
}

/// Accounts stored before phone identities were E.164 (`tel:` and the digits as typed) get
/// E.164 keys at the next start: the number logs in however it is written, and two that now
/// name one number are both kept, reported, and log in as each was first written.
@Suite("Migrating phone accounts to E.164 identities")
struct PhoneMigrationTests {
    @Test("tel:DIGITS accounts log in by any spelling; two that now collide are kept and reported")
    func migrates() throws {
        let a = PhoneIdentityTests.chineseMobile()
        let b = PhoneIdentityTests.chineseMobile()
        let digits = String(a.e164.dropFirst(3))
        let daemon = DaemonProcess()
        try daemon.start()
        let client = try daemon.connect()
        _ = try client.hello()
        #expect(try client.phoneSignup(digits, "first password")["ok"] == .bool(true))
        #expect(try client.phoneSignup(b.spellings[0], "second password")["ok"] == .bool(true))
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit() == 0)

        // As the previous release stored them: A typed as 13…, the other as 0086 13… of the same number.
        let queue = try DatabaseQueue(path: daemon.databasePath)
        try queue.write { db in
            // (The previous release kept no legacy key for accounts it made itself.)
            try db.execute(sql: "UPDATE account SET username = ?, legacyKey = NULL WHERE username = ?", arguments: ["tel:" + digits, "tel:" + a.e164])
            try db.execute(sql: "UPDATE account SET username = ?, legacyKey = NULL WHERE username = ?", arguments: ["tel:0086" + digits, "tel:" + b.e164])
            let version = try #require(try String.fetchOne(db, sql: "SELECT version FROM identityKeyVersion"))
            try db.execute(sql: "UPDATE identityKeyVersion SET version = ?", arguments: [version.replacingOccurrences(of: "+tel-E.164", with: "")])
        }

        let again = DaemonProcess(directory: daemon.directory)
        try again.start()
        let after = try again.connect()
        _ = try after.hello()
        #expect(again.log.contains("collide") && again.log.contains("tel:\(digits)") && again.log.contains("tel:0086\(digits)"), "the collision is reported: \(again.log)")
        let first = try after.phoneLogin(digits, "first password")
        #expect(first["ok"] == .bool(true) && first.string("user") == "tel:" + digits, "\(first)")
        let second = try after.phoneLogin("0086 " + digits, "second password")
        #expect(second["ok"] == .bool(true) && second.string("user") == "tel:0086" + digits, "\(second)")
        let spelled = try again.connect()
        _ = try spelled.hello()
        #expect(try spelled.phoneLogin(PhoneIdentityTests.fullWidth(digits), "first password")["ok"] == .bool(true), "a new spelling finds the oldest")
        #expect(try spelled.phoneSignupVerdict("+86 " + digits)["messageId"] == .string("phone.taken"))
        again.signal(SIGTERM)
        #expect(again.waitForExit() == 0)
    }
}
