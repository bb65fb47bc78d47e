import SignupProtocol
import Testing

/// RxLoginTest over the socket: the real daemon as a separate process, every message
/// checked against the schema by `LineClient`.
@Suite("Phone forms and locales over the socket")
struct PhoneFormsTests {
    /// A fresh Chinese mobile number per test run (86 and 13 then nine digits): a number
    /// libphonenumber finds valid.
    private func uniquePhone() -> String {
        "8613" + String(UInt64.random(in: 100_000_000...999_999_999))
    }

    private func validation(_ messages: [JSONObject], _ field: String) -> [String] {
        messages.filter { $0.string("event") == "validation" && $0.string("field") == field }
            .map { "\($0.string("state") ?? "") \($0.string("messageId") ?? "") \($0.string("message") ?? "")" }
    }

    @Test("zh-CN: 10 digits 号码长度不足, 11 ok, a 5-character password 密码长度不足; login only when both are ok; the token verifies")
    func rxLoginTest() throws {
        let phone = uniquePhone()
        let client = try SharedDaemon.client()
        try client.send(Request(.open(form: "phone-signup", locale: nil)))
        _ = try client.next("busy")
        var seen = try client.set("phone", "+" + phone)
        seen += try client.set("password", "secret6")
        // The availability answer may come after the barrier.
        if !seen.contains(where: { $0.string("event") == "enabled" && $0["value"] == .bool(true) }) {
            _ = try client.next("enabled", "value", .bool(true))
        }
        try client.send(Request(.submit(session: nil)))
        let signedUp = try client.next("result")
        #expect(signedUp["ok"] == .bool(true) && signedUp.string("user") == "tel:+" + phone && signedUp.string("messageId") == "signup.done")

        try client.send(Request(id: .string("o"), .open(form: "phone-login", locale: "zh-CN")))
        #expect(try client.next("opened").string("locale") == "zh-CN")
        _ = try client.next("busy")
        seen = try client.set("phone", String(phone.dropFirst(2).prefix(10)))  // a mobile number short of a digit
        seen += try client.set("password", "12345")
        #expect(validation(seen, "phone") == ["failed phone.too_short 号码长度不足"])
        #expect(validation(seen, "password") == ["failed password.short 密码长度不足"])
        seen = try client.set("phone", String(phone.suffix(11)))
        #expect(validation(seen, "phone") == ["ok phone.valid 号码有效"])
        #expect(!seen.contains { $0.string("event") == "enabled" })
        try client.send(Request(id: .string("early"), .submit(session: nil)))
        #expect(try client.next("error").string("code") == "not_ready")
        seen = try client.set("phone", String(phone.prefix(2)) + " " + String(phone.dropFirst(2)))
        seen += try client.set("password", "secret6")
        #expect(seen.contains { $0.string("event") == "enabled" && $0["value"] == .bool(true) })
        try client.send(Request(.submit(session: nil)))
        let result = try client.next("result")
        #expect(result["ok"] == .bool(true) && result.string("message") == "登录成功" && result.string("user") == "tel:+" + phone)
        let token = try #require(result.string("token"))
        try client.send(Request(id: .string("v"), .verify(token: token)))
        #expect(try client.next("verified").string("user") == "tel:+" + phone)
    }

    @Test("a live locale switch re-renders every message with the same ids and params")
    func localeSwitch() throws {
        let client = try SharedDaemon.client()
        _ = try client.open("signup")
        _ = try client.set("username", "no_good")
        _ = try client.set("password", "abc")
        _ = try client.set("repeatedPassword", "abd")
        try client.send(Request(id: .string("snap"), .snapshot(session: nil)))
        let english = try client.next(where: { $0.string("event") == "busy" }).before
        try client.send(Request(id: .string("zh"), .locale(session: nil, locale: "zh-CN")))
        #expect(try client.next("locale").string("locale") == "zh-CN")
        let chinese = try client.next(where: { $0.string("event") == "busy" }).before
        let before = english.filter { $0.string("event") == "validation" }
        let after = chinese.filter { $0.string("event") == "validation" }
        #expect(before.count == 3 && after.count == 3)
        for (old, new) in zip(before, after) {
            #expect(old.string("messageId") == new.string("messageId") && old["params"] == new["params"])
            #expect(old.string("message") != new.string("message"))
        }
        #expect(after.map { $0.string("message") ?? "" } == ["用户名只能包含数字和字母", "密码至少需要 5 个字符", "两次输入的密码不一致"])
    }
}
