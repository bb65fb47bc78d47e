import FormEngine
import SignupProtocol
import Testing

@Suite("Signup form rules")
struct SignupRulesTests {
    private func validation(_ field: String, _ value: String, in session: inout FormSession) throws -> Shown {
        _ = try session.handle(.set(field: field, value: value), now: .zero)
        return session.shown(session.form.index(of: field)!)
    }

    @Test("letters and digits of any script are accepted", arguments: [
        "alice", "Bob42", "über", "Ærøskøbing", "名前", "пользователь", "١٢٣", "José", "ǅungla", "ʰmodifier", "a",
        String(repeating: "x", count: 39),
    ])
    func validUsernames(_ name: String) throws {
        var session = FormSession(form: .signup)
        let result = try validation("username", name, in: &session)
        #expect(result == Shown(.validating, "Checking availability"))
    }

    @Test("anything else fails with the character message", arguments: [
        "under_score", "da-sh", "do.t", "spa ce", "emoji👍", "tab\t", "nul\u{0}", "e\u{301}", "half½", "ⅻ", "@", "a+b",
        String(repeating: "_", count: 50), "\u{0639}\u{0640}\u{0644}\u{064A}", "\u{0640}",
    ])
    func invalidCharacters(_ name: String) throws {
        var session = FormSession(form: .signup)
        let result = try validation("username", name, in: &session)
        #expect(result == Shown(.failed, "Username can only contain letters or digits"))
    }

    @Test("modifier letters alone are not a name; one character of many code points is refused", arguments: [
        ("\u{02BC}\u{02BC}", "Username must contain a letter or digit other than a modifier letter"),
        ("\u{0E46}\u{0E46}", "Username must contain a letter or digit other than a modifier letter"),
        ("\u{A717}\u{A717}", "Username must contain a letter or digit other than a modifier letter"),
        ("\u{02D1}", "Username must contain a letter or digit other than a modifier letter"),
        (String(repeating: "\u{1100}", count: 85), "Username characters can have at most 4 combining marks and 8 code points each"),
    ])
    func basicRuleRefusals(_ name: String, _ message: String) throws {
        var session = FormSession(form: .signup)
        #expect(try validation("username", name, in: &session) == Shown(.failed, message))
    }

    @Test("invisible code points fail with their own message, even beside letters", arguments: [
        "dave\u{115F}", "carol\u{3164}", "\u{3164}", "bo\u{200D}b", "alice\u{202E}", "bob\u{FE0F}", "ju\u{AD}dy",
    ])
    func invisibleCharacters(_ name: String) throws {
        var session = FormSession(form: .signup)
        let result = try validation("username", name, in: &session)
        #expect(result == Shown(.failed, "Username cannot contain invisible characters"))
    }

    @Test("a username over 255 bytes fails before anything else is counted")
    func usernameBytes() throws {
        var session = FormSession(form: .signup)
        let result = try validation("username", "admin" + String(repeating: "\u{1160}", count: 300), in: &session)  // 905 bytes
        #expect(result == Shown(.failed, "Username must be at most 255 bytes"))
        let fits = try validation("username", String(repeating: "é", count: 39), in: &session)
        #expect(fits.state == .validating)
    }

    @Test("a value past the field's input byte cap is refused and not stored", arguments: [
        ("username", 1020), ("password", 4096), ("repeatedPassword", 4096),
    ])
    func valueTooLong(_ field: String, _ cap: Int) throws {
        var session = FormSession(form: .signup)
        #expect(session.form.inputByteCap(of: session.form.index(of: field)!) == cap)
        let before = try validation(field, "abcdef", in: &session)
        let index = session.form.index(of: field)!
        let heavy = "a" + String(repeating: "\u{301}", count: cap / 2)  // one character, cap + 1 bytes
        #expect(heavy.utf8.count == cap + 1)
        #expect(throws: FormError.valueTooLong(field: field, maxBytes: cap)) { try session.handle(.set(field: field, value: heavy), now: .zero) }
        #expect(session.values[index] == "abcdef")
        #expect(session.shown(index) == before)
        // Exactly the cap is taken (and judged by the field's rules).
        let full = String(repeating: "p", count: cap)
        _ = try session.handle(.set(field: field, value: full), now: .zero)
        #expect(session.values[index] == full)
    }

    @Test("a field without a byte rule of its own is capped at 4096 bytes; describe states every cap")
    func defaultCap() throws {
        let phone = FormDefinition.phoneSignup
        let index = phone.index(of: "phone")!
        #expect(phone.inputByteCap(of: index) == FormDefinition.defaultInputByteCap)
        var session = FormSession(form: phone)
        #expect(throws: FormError.valueTooLong(field: "phone", maxBytes: 4096)) {
            try session.handle(.set(field: "phone", value: String(repeating: " ", count: 4097)), now: .zero)
        }
        #expect(session.values[index] == "")
        let described = FormDefinition.signup.description().fields.map { $0.rules?.maxInputBytes }
        #expect(described == [1020, 4096, 4096])
    }

    @Test("password fields are capped at 4096 bytes, whatever their character count")
    func passwordBytes() throws {
        var session = FormSession(form: .signup)
        let heavy = "a" + String(repeating: "\u{301}", count: 2100)  // one character, 4201 bytes
        #expect(throws: FormError.valueTooLong(field: "password", maxBytes: 4096)) { try session.handle(.set(field: "password", value: heavy), now: .zero) }
        let underCap = String(repeating: "p", count: 1025)  // within the byte cap: stored, and judged by the rules
        #expect(try validation("password", underCap, in: &session) == Shown(.failed, "Password must be at most 1024 characters"))
        var login = FormSession(form: .login)
        #expect(throws: FormError.valueTooLong(field: "password", maxBytes: 4096)) { try login.handle(.set(field: "password", value: heavy), now: .zero) }
        #expect(login.shown(1).state == .empty)
    }

    @Test("a configured username rule decides, and each verdict has its message", arguments: [
        (UsernameVerdict.mixedScripts, "Username mixes scripts or number systems"),
        (.tooManyBytes, "Username must be at most 255 bytes"),
        (.invisibleCharacters, "Username cannot contain invisible characters"),
        (.tooLong, "Username must be at most 39 characters"),
        (.invalidCharacters, "Username can only contain letters or digits"),
        (.noLetter, "Username must contain a letter or digit other than a modifier letter"),
        (.overloadedCharacter, "Username characters can have at most 4 combining marks and 8 code points each"),
        (.bidiOrder, "Username with right-to-left letters must start with a letter and keep one direction"),
    ])
    func configuredRule(_ verdict: UsernameVerdict, _ message: String) throws {
        let configuration = FormConfiguration(usernameRule: UsernameRule { _ in verdict })
        var session = FormSession(form: .signup, configuration: configuration)
        _ = try session.handle(.set(field: "username", value: "alice"), now: .zero)
        #expect(session.shown(0) == Shown(.failed, message))
    }

    @Test("the identity rule's refusals have message ids, parameters and zh-CN texts", arguments: [
        (UsernameVerdict.noLetter, "username.no_letter", "用户名必须包含修饰字母以外的字母或数字"),
        (.overloadedCharacter, "username.overloaded_character", "用户名的每个字符最多只能有 4 个组合符号和 8 个码位"),
        (.bidiOrder, "username.bidi_order", "含有从右到左书写字母的用户名必须以字母开头，并保持同一书写方向"),
    ])
    func refusalIDs(_ verdict: UsernameVerdict, _ id: String, _ chinese: String) throws {
        let configuration = FormConfiguration(usernameRule: UsernameRule { _ in verdict })
        var session = FormSession(form: .signup, configuration: configuration)
        _ = try session.handle(.set(field: "username", value: "alice"), now: .zero)
        let message = session.validations[0].message
        #expect(message.id == id)
        #expect(MessageCatalogues.builtin.render(message, locale: "zh-CN").text == chinese)
    }

    @Test("39 characters pass, 40 fail", arguments: [(39, true), (40, false), (41, false), (38, true)])
    func usernameLength(_ length: Int, _ passes: Bool) throws {
        var session = FormSession(form: .signup)
        let result = try validation("username", String(repeating: "ü", count: length), in: &session)
        #expect(result.state == (passes ? .validating : .failed))
        if !passes { #expect(result.message == "Username must be at most 39 characters") }
    }

    @Test("password length counts grapheme clusters", arguments: [
        ("", ValidationState.empty), ("abcd", .failed), ("abcde", .ok), ("ab👍🏽cd", .ok), ("ab👍🏽c", .failed),
        ("🇫🇷🇩🇪🇮🇹🇪🇸", .failed), ("🇫🇷🇩🇪🇮🇹🇪🇸🇵🇹", .ok), ("e\u{301}e\u{301}e\u{301}e\u{301}", .failed),
        (String(repeating: "p", count: 1024), .ok), (String(repeating: "p", count: 1025), .failed),
    ])
    func passwordLength(_ password: String, _ expected: ValidationState) throws {
        var session = FormSession(form: .signup)
        let result = try validation("password", password, in: &session)
        #expect(result.state == expected)
        switch expected {
        case .ok: #expect(result.message == "Password acceptable")
        case .failed where password.count > 1024: #expect(result.message == "Password must be at most 1024 characters")
        case .failed: #expect(result.message == "Password must be at least 5 characters")
        default: #expect(result.message == "")
        }
    }

    @Test("the repeated password is re-evaluated when either field changes")
    func repeatedPassword() throws {
        var session = FormSession(form: .signup)
        #expect(try validation("repeatedPassword", "secret1", in: &session) == Shown(.failed, "Password different"))
        let step = try session.handle(.set(field: "password", value: "secret1"), now: .zero)
        #expect(step.events.textOnly == [
            .validation(field: "password", state: .ok, message: "Password acceptable"),
            .validation(field: "repeatedPassword", state: .ok, message: "Passwords match"),
        ])
        #expect(try validation("repeatedPassword", "", in: &session) == Shown.empty)
    }

    @Test("repeated passwords compare bytes, not canonical equivalence")
    func repeatedComparesBytes() throws {
        var session = FormSession(form: .signup)
        _ = try session.handle(.set(field: "password", value: "caf\u{e9}12"), now: .zero)
        #expect(try validation("repeatedPassword", "cafe\u{301}12", in: &session).state == .failed)
    }

    @Test("events are sent only on change")
    func onlyChanges() throws {
        var session = FormSession(form: .signup)
        #expect(try session.handle(.set(field: "password", value: ""), now: .zero).events.isEmpty)
        #expect(try session.handle(.set(field: "password", value: "abc"), now: .zero).events.count == 1)
        // Still failed with the same message: nothing to send.
        #expect(try session.handle(.set(field: "password", value: "abcd"), now: .zero).events.isEmpty)
        // Same username again: no second check.
        let first = try session.handle(.set(field: "username", value: "carol"), now: .zero)
        #expect(first.effects.count == 1)
        #expect(try session.handle(.set(field: "username", value: "carol"), now: .zero) == FormStep())
    }

    @Test("unknown fields are refused and change nothing")
    func unknownField() throws {
        var session = FormSession(form: .signup)
        let before = session
        #expect(throws: FormError.unknownField("email")) { try session.handle(.set(field: "email", value: "x"), now: .zero) }
        #expect(session == before)
    }

    @Test("a check that does not answer in time fails with the server message and cancels")
    func checkTimeout() throws {
        var harness = VirtualClockHarness(form: .signup)
        harness.checkDelay = 100
        try harness.send(.set(field: "username", value: "slowpoke"))
        harness.advance(to: 14)
        #expect(harness.validations(of: "username").last?.1 == .validating)
        harness.advance(to: 15)  // 3 s = 15 ticks of 0.2 s
        #expect(harness.validations(of: "username").last.map { "\($0.1.rawValue)@\($0.0) \($0.2)" } == "failed@15 Error contacting server")
        #expect(harness.effects.last?.effect == .cancelCheck(id: 1))
        #expect(harness.session.nextDeadline == nil)
    }

    @Test("a syntactically invalid username cancels the check in flight")
    func invalidCancelsCheck() throws {
        var session = FormSession(form: .signup)
        _ = try session.handle(.set(field: "username", value: "dave"), now: .zero)
        let step = try session.handle(.set(field: "username", value: "dave!"), now: .zero)
        #expect(step.effects == [.cancelCheck(id: 1)])
        #expect(try session.handle(.availability(check: 1, .available), now: .zero) == FormStep())
    }
}
