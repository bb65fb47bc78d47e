import FormEngine
import SignupProtocol
import Testing

/// RxLoginTest (seed 000_96583eeefdbefdf2): a phone number of at least 11 digits
/// ("号码长度不足"), a password of at least 6 characters ("密码长度不足"), login enabled
/// only when both are valid, and a login that returns a token.
@Suite("RxLoginTest phone forms on a virtual clock")
struct PhoneLoginTests {
    /// The messages of one field, as (tick, state, id, text).
    private func messages(_ harness: VirtualClockHarness, _ field: String) -> [String] {
        harness.log.compactMap { entry in
            guard case .validation(field, let state, let message) = entry.event else { return nil }
            return "\(entry.tick) \(state.rawValue) \(message.id) \(message.text)"
        }
    }

    @Test("zh-CN: 10 digits are too short, 11 are ok; a 5-character password is too short; enabled only when both are ok")
    func rxLoginTest() throws {
        var harness = VirtualClockHarness(form: .phoneLogin, locale: "zh-CN")
        harness.advance(to: 1)
        try harness.send(.set(field: "phone", value: "1381234567"))  // 10 digits
        harness.advance(to: 2)
        try harness.send(.set(field: "password", value: "12345"))
        harness.advance(to: 3)
        try harness.send(.set(field: "phone", value: "138 1234-5678"))  // 11 digits, spaces and dashes ignored
        harness.advance(to: 4)
        try harness.send(.set(field: "password", value: "123456"))
        harness.advance(to: 5)
        try harness.send(.set(field: "phone", value: "+8613812345678x"))

        #expect(messages(harness, "phone") == [
            "0 empty  ", "1 failed phone.too_short 号码长度不足", "3 ok phone.valid 号码有效", "5 failed phone.invalid 号码格式错误",
        ])
        #expect(messages(harness, "password") == ["0 empty  ", "2 failed password.short 密码长度不足", "4 ok password.entered 已输入密码"])
        #expect(harness.enabledChanges.map { "\($0.1)@\($0.0)" } == ["false@0", "true@4", "false@5"])
    }

    @Test("English texts of the same rules", arguments: [
        ("phone", "1381234567", "phone.too_short", "Phone number too short"),
        ("password", "12345", "password.short", "Password too short"),
        ("phone", "138l2345678", "phone.invalid", "Phone number can only contain digits, spaces, dashes, dots, brackets and a leading +"),
        ("phone", "1234567890123456", "phone.too_long", "Phone number too long"),
    ])
    func english(_ field: String, _ value: String, _ id: String, _ text: String) throws {
        var session = FormSession(form: .phoneLogin)
        let step = try session.handle(.set(field: field, value: value), now: .zero)
        guard case .validation(_, .failed, let message)? = step.events.first else {
            Issue.record("no failed validation: \(step.events)")
            return
        }
        #expect(message.id == id)
        #expect(message.text == text)
    }

    @Test("login submits the phone identity and the password; the token comes back in the result")
    func loginSubmits() throws {
        var session = FormSession(form: .phoneLogin, locale: "zh-CN")
        _ = try session.handle(.set(field: "phone", value: "+86 138-1234-5678"), now: .zero)
        _ = try session.handle(.set(field: "password", value: "secret"), now: .zero)
        let submit = try session.handle(.submit, now: .zero)
        #expect(submit.effects == [.submit(.login, identity: IdentityValue(.phone, "+86 138-1234-5678", region: "CN"), password: "secret")])
        let done = try session.handle(.submitCompleted(.loggedIn(user: "tel:8613812345678", token: "tok")), now: .zero)
        #expect(done.events.first == .result(ok: true, message: LocalizedMessage(id: "login.done", text: "登录成功"), user: "tel:8613812345678", token: "tok"))
        let failed = try {
            var other = FormSession(form: .phoneLogin)
            _ = try other.handle(.set(field: "phone", value: "13812345678"), now: .zero)
            _ = try other.handle(.set(field: "password", value: "secret"), now: .zero)
            _ = try other.handle(.submit, now: .zero)
            return try other.handle(.submitCompleted(.invalidCredentials), now: .zero)
        }()
        #expect(failed.events.first?.textOnly == .result(ok: false, message: "Invalid phone number or password", user: nil, token: nil))
    }

    @Test("a parser that cannot judge numbers now refuses every one as the server's fault, in both languages, and nothing is checked or submitted", arguments: [
        ("en", "Phone numbers cannot be checked right now, try again later"), ("zh-CN", "暂时无法校验号码，请稍后再试"),
    ])
    func unavailable(_ locale: String, _ text: String) throws {
        let broken = FormConfiguration(phoneNumbers: PhoneNumberRule { _, _ in PhoneVerdict(.unavailable) })
        var harness = VirtualClockHarness(form: .phoneSignup, locale: locale, configuration: broken)
        try harness.send(.set(field: "phone", value: "13812345678"))
        try harness.send(.set(field: "password", value: "secret"))
        harness.advance(to: 5)
        #expect(messages(harness, "phone") == ["0 empty  ", "0 failed phone.unavailable \(text)"])
        #expect(harness.effects.isEmpty, "\(harness.effects)")
        #expect(harness.enabledChanges.map(\.1).allSatisfy { !$0 })
    }

    @Test("phone signup checks availability of the phone identity, never of the text as typed")
    func phoneSignupChecks() throws {
        var harness = VirtualClockHarness(form: .phoneSignup)
        harness.answers = ["13812345678": .taken]
        try harness.send(.set(field: "phone", value: "13812345678"))
        harness.advance(to: 5)
        #expect(harness.effects.first?.effect == .startCheck(id: 1, identity: IdentityValue(.phone, "13812345678", region: "CN"), deadline: Moment(nanoseconds: 3_000_000_000)))
        #expect(messages(harness, "phone").last == "3 failed phone.taken Phone number already registered")
    }
}

@Suite("A live locale switch")
struct LocaleSwitchTests {
    @Test("switching re-renders every message of the session with the same ids and params")
    func switchRerenders() throws {
        var session = FormSession(form: .signup)
        _ = try session.handle(.set(field: "username", value: "bad_name"), now: .zero)
        _ = try session.handle(.set(field: "password", value: "abc"), now: .zero)
        _ = try session.handle(.set(field: "repeatedPassword", value: "abd"), now: .zero)
        let english = session.snapshot()
        let step = try session.handle(.setLocale("zh-Hans-CN"), now: .zero)
        #expect(session.locale == "zh-CN")
        #expect(step.events.count == english.count)
        for (before, after) in zip(english, step.events) {
            switch (before, after) {
            case (.validation(let field, let state, let old), .validation(let newField, let newState, let new)):
                #expect(field == newField && state == newState)
                #expect(old.id == new.id)
                #expect(old.params == new.params)
                if !old.id.isEmpty { #expect(old.text != new.text, "\(old.id) has no Chinese text") }
            case (.enabled(let a), .enabled(let b)), (.busy(let a), .busy(let b)):
                #expect(a == b)
            default:
                Issue.record("snapshot changed shape: \(before) → \(after)")
            }
        }
        #expect(step.events.map(\.textOnly).contains(.validation(field: "password", state: .failed, message: "密码至少需要 5 个字符")))
        #expect(step.events.map(\.textOnly).contains(.validation(field: "repeatedPassword", state: .failed, message: "两次输入的密码不一致")))
        #expect(step.effects.isEmpty)
    }

    @Test("BCP 47 fallback", arguments: [
        ("zh-CN", "zh-CN"), ("zh", "zh-CN"), ("zh-Hans-CN", "zh-CN"), ("ZH-cn", "zh-CN"), ("en-GB", "en"), ("fr", "en"), ("de-AT", "en"),
    ])
    func fallback(_ tag: String, _ resolved: String) {
        #expect(MessageCatalogues.builtin.resolve(tag) == resolved)
    }

    @Test("every message id has a text in every shipped locale")
    func complete() {
        let catalogues = MessageCatalogues.builtin
        let english = Set(catalogues.byLocale["en"]!.texts.keys)
        for locale in catalogues.locales {
            let ids = Set(catalogues.byLocale[locale.lowercased()]!.texts.keys)
            #expect(ids == english, "\(locale): missing \(english.subtracting(ids).sorted()), extra \(ids.subtracting(english).sorted())")
        }
    }
}
