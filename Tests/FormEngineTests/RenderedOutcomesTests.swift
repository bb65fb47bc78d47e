import FormEngine
import SignupProtocol
import Testing

/// A session keeps each outcome of its fields' rules rendered the first time it shows it
/// (`RenderedOutcomes`, issue 29): typing back to it shows the same message without
/// rendering it again, in the session's locale of the moment and with its own catalogues.
@Suite struct RenderedOutcomesTests {
    static func signup(catalogues: MessageCatalogues = .builtin) -> FormSession {
        FormSession(form: .signup, configuration: FormConfiguration(catalogues: catalogues))
    }

    /// The message of the `password` validation a step sent.
    static func password(_ step: FormStep) -> LocalizedMessage? {
        for event in step.events {
            if case .validation(let field, _, let message) = event, field == "password" { return message }
        }
        return nil
    }

    static let tooShort = MessageRef("password.too_short", [.init("min", .integer(5))])

    @Test("a value typed again shows what it showed the first time, parameters and all")
    func sameAgain() throws {
        var session = Self.signup()
        let first = try session.handle(.set(field: "password", value: "abc"), now: .zero)
        let acceptable = try session.handle(.set(field: "password", value: "abcdef"), now: .zero)
        let again = try session.handle(.set(field: "password", value: "abd"), now: .zero)
        let back = try session.handle(.set(field: "password", value: "abcdefg"), now: .zero)
        #expect(Self.password(first) == LocalizedMessage(id: "password.too_short", params: [.init("min", .integer(5))], text: "Password must be at least 5 characters"))
        #expect(again == first)
        #expect(Self.password(acceptable)?.id == "password.acceptable")
        #expect(back == acceptable)
    }

    @Test("after a locale switch, an outcome shown before is rendered in the new locale")
    func localeSwitch() throws {
        var session = Self.signup()
        _ = try session.handle(.set(field: "password", value: "abc"), now: .zero)
        _ = try session.handle(.set(field: "password", value: "abcdef"), now: .zero)
        _ = try session.handle(.setLocale("zh-CN"), now: .zero)
        let step = try session.handle(.set(field: "password", value: "abc"), now: .zero)
        let chinese = MessageCatalogues.builtin.render(Self.tooShort, locale: "zh-CN").text
        #expect(chinese == "密码至少需要 5 个字符")
        #expect(Self.password(step)?.text == chinese)
    }

    @Test("a session restored with other catalogues renders with those, not what it kept")
    func restoredElsewhere() throws {
        var session = Self.signup()
        _ = try session.handle(.set(field: "password", value: "abc"), now: .zero)
        _ = try session.handle(.set(field: "password", value: "abcdef"), now: .zero)
        var reworded = MessageCatalogues.builtin
        reworded.merge(MessageCatalogue(locale: "en", texts: ["password.too_short": "Longer, please: {min} at least"]))
        var restored = FormSession(restoring: session, configuration: FormConfiguration(catalogues: reworded))
        let step = try restored.handle(.set(field: "password", value: "abc"), now: .zero)
        #expect(Self.password(step)?.text == "Longer, please: 5 at least")
    }

    @Test("kept outcomes are not part of the state: a session that has typed equals one that has not, at the same values")
    func notState() throws {
        var typed = Self.signup()
        _ = try typed.handle(.set(field: "password", value: "abc"), now: .zero)
        _ = try typed.handle(.set(field: "password", value: "abcdef"), now: .zero)
        var direct = Self.signup()
        _ = try direct.handle(.set(field: "password", value: "abcdef"), now: .zero)
        #expect(typed == direct)
    }
}
