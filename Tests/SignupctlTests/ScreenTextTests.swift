import SignupProtocol
import Testing

@testable import signupctl

@Suite("The form's own words follow the session's language")
struct ScreenTextTests {
    static let chineseSignup = FormDescription(
        name: "signup",
        fields: [.init(name: "username", secret: false, label: "用户名"), .init(name: "password", secret: true, label: "密码")],
        submitLabel: "注册", title: "注册账号")

    @Test("the resolved locale picks the table: Simplified Chinese for zh and zh-CN-like tags, English otherwise",
          arguments: [
            ("zh-CN", true), ("zh", true), ("zh-Hans", true), ("zh-SG", true), ("ZH-cn", true),
            ("zh-TW", false), ("zh-Hant", false), ("zh-Hant-CN", false), ("zh-HK", false), ("en", false), ("fr-FR", false),
          ])
    func chooses(_ tag: String, _ chinese: Bool) {
        let text = ScreenText.forLocale(tag)
        #expect((text.keysRoomy == ScreenText.simplifiedChinese.keysRoomy) == chinese)
        #expect((text.keysRoomy == ScreenText.english.keysRoomy) == !chinese)
    }

    @Test("no locale named means English")
    func none() {
        #expect(ScreenText.forLocale(nil).done == ScreenText.english.done)
    }

    @Test("a zh-CN frame: the title heads it, and hints, button, footer and the too-small notice are Chinese")
    func chineseFrame() {
        var view = SessionView(form: Self.chineseSignup)
        view.session = "0123456789abcdef"
        var screen = FormScreen(view: view, color: false)
        screen.text = .forLocale("zh-CN")
        for (columns, rows) in [(80, 24), (60, 14)] {
            let lines = screen.render(columns: columns, rows: rows).lines.map(FormScreen.plain)
            // The heading is the form's title alone: no English program name on a Chinese screen.
            #expect(lines.contains { $0.filter { $0 != " " } == "注册账号" }, "\(columns)x\(rows)")
            #expect(!lines.joined().contains("signupd"), "\(columns)x\(rows)")
            #expect(lines.contains { $0.contains("Esc 退出") }, "\(columns)x\(rows)")
            #expect(lines.contains { $0.contains("（不可用）") }, "\(columns)x\(rows)")
            #expect(lines.contains { $0.contains("会话 0123456789abcdef") }, "\(columns)x\(rows)")
            #expect(!lines.joined().contains("Esc quit") && !lines.joined().contains("(disabled)"))
        }
        // Too small: how to quit comes first, and the notice wraps to fit the window whole.
        for (columns, rows) in [(40, 5), (40, 10), (12, 6)] {
            let small = screen.render(columns: columns, rows: rows).lines.map(FormScreen.plain).filter { !$0.isEmpty }
            #expect(small.first?.hasPrefix("按 Esc") == true, "\(columns)x\(rows): \(small)")
            let whole = ScreenText.simplifiedChinese.tooSmall(columns, rows, FormScreen.minimumColumns, screen.compactRows)
            #expect(small.joined().filter { $0 != " " } == whole.filter { $0 != " " }, "\(columns)x\(rows): \(small)")
            #expect(small.allSatisfy { DisplayWidth.of($0) <= columns - 1 }, "\(columns)x\(rows): \(small)")
        }
        screen.view.result = SessionView.Result(ok: true, message: "注册成功", user: "alice", token: nil)
        let done = screen.render(columns: 80, rows: 24).lines.map(FormScreen.plain)
        #expect(done.filter { $0.contains("按任意键退出") }.count == 1, "said once: \(done)")
        #expect(done.contains { $0.contains("[ 注册 ]  完成") }, "\(done)")
    }

    @Test("without a title the heading is the submit label, as before")
    func headingFallback() {
        var screen = FormScreen(view: SessionView(form: FormScreenTests.signup), color: false)
        screen.text = .forLocale("en")
        let lines = screen.render(columns: 80, rows: 24).lines.map(FormScreen.plain)
        #expect(lines.contains { $0.contains("Sign up — signupd") })
    }
}
