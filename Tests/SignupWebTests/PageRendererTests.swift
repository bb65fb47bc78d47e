import SignupClient
import SignupProtocol
import Testing
@testable import SignupWebCore

/// The page drawn from a description: names, labels, messages, and nothing unescaped.
@Suite struct PageRendererTests {
    private let form = FormDescription(
        name: "signup", fields: [
            .init(name: "username", secret: false, label: "User<name>", rules: nil, kind: "username"),
            .init(name: "password", secret: true, label: "Password", rules: nil, kind: "secret"),
        ], submitLabel: "Sign up", title: "Sign up", action: "signup")

    @Test func fieldsCarryTheirNamesLabelsAndMessages() {
        var content = PageRenderer.Content(form: form, forms: [("signup", "Sign up"), ("login", "Log in")], locale: "en", csrf: "c", values: ["username": "<b>bob</b>", "password": "hunter2"])
        content.validations = ["username": FieldValidation(field: "username", state: .failed, message: "Username already taken", messageId: "username.taken")]
        let html = PageRenderer().render(content)
        #expect(html.contains(#"<input id="f-username" name="username" type="text" autocomplete="username" aria-describedby="m-username" value="&lt;b&gt;bob&lt;/b&gt;" aria-invalid="true" autofocus>"#))
        // Sent back with a problem: the title says so and focus starts at the first failed field.
        #expect(html.contains("<title>Please check the form · Sign up</title>"))
        #expect(html.contains(#"<label for="f-username">User&lt;name&gt;</label>"#))
        #expect(html.contains(#"data-state="failed" aria-live="polite">Username already taken</p>"#))
        // A secret value is never sent back.
        #expect(!html.contains("hunter2"))
        #expect(html.contains(#"type="password" autocomplete="new-password""#))
        #expect(html.contains(#"<a href="/signup" aria-current="page" data-form-link="signup">"#))
        #expect(html.contains(#"<input type="hidden" name="csrf" value="c">"#))
    }

    @Test func afterAPlainPostTheResultIsInTheTitleAndHasFocus() {
        var content = PageRenderer.Content(form: form, forms: [], locale: "en", csrf: "c")
        content.result = FormResult(ok: true, message: "Signed up", messageId: "signup.done", params: [], user: "bob", token: nil)
        let html = PageRenderer().render(content)
        #expect(html.contains("<title>Signed up · Sign up</title>"))
        #expect(html.contains(#"role="alert" data-ok="true" tabindex="-1" autofocus>Signed up</p>"#))
        #expect(html.contains(##"<a class="skip" href="#form">Skip to the form</a>"##))
    }

    @Test func theChineseWordsAreTheBridgesOwnToo() {
        let html = PageRenderer().render(.init(form: form, forms: [], locale: "zh-CN", csrf: "c", signedIn: "李"))
        #expect(html.contains(#"<html lang="zh-CN">"#) && html.contains("退出登录") && html.contains("已登录："))
        #expect(!html.contains(#"class="signed-in" method="post" action="/logout" hidden"#))
    }
}
