/// The forms signupd serves without configuration, in the operators' file format
/// (`FormFile`; README "Forms"). An operator's `/etc/signupd/forms.d/NAME.form` with the
/// same `name` replaces one. Kept as text so that they are read exactly like an operator's;
/// the four are built from the parts below, so that a label or a rule they share is
/// written once.
public enum BuiltinForms {
    /// By file name, in the order `describe` lists them.
    public static let files: [(name: String, text: String)] = [
        ("signup.form", signup), ("login.form", login), ("phone-signup.form", phoneSignup), ("phone-login.form", phoneLogin),
    ]

    /// The sign-up form of the RxSwift GitHubSignup example.
    static let signup = form(
        name: "signup", title: "Sign up", titleZh: "注册", action: .signup, identity: .username,
        passwordRules: [], extra: """

            [field repeatedPassword]
            kind = secret
            label = Repeat password
            label.zh-CN = 再次输入密码
            rule = equals password
            ok = password.match

            """)

    /// The login form of the RxSwift login demos.
    static let login = form(name: "login", title: "Log in", titleZh: "登录", action: .login, identity: .username, passwordRules: [])

    /// RxLoginTest's phone number sign-up: at least 11 digits, a password of at least 6.
    static let phoneSignup = form(
        name: "phone-signup", title: "Sign up with a phone number", titleZh: "手机号注册", action: .signup, identity: .phone,
        passwordRules: ["min-length 6 as password.short"])

    /// RxLoginTest's login: a phone number of at least 11 digits ("号码长度不足") and a
    /// password of at least 6 characters ("密码长度不足"); login returns a token.
    static let phoneLogin = form(
        name: "phone-login", title: "Log in with a phone number", titleZh: "手机号登录", action: .login, identity: .phone,
        passwordRules: ["min-length 6 as password.short"])

    /// What a form does; it decides the submit button, whether the identity must be
    /// available, and how much the password field checks.
    enum Action: String {
        case signup, login

        var submit: (en: String, zh: String) { self == .signup ? ("Sign up", "注册") : ("Log in", "登录") }
    }

    /// The identity field: its name (also its kind), label and rule.
    struct Identity {
        let name: String, label: String, labelZh: String, rule: String
        static let username = Identity(name: "username", label: "Username", labelZh: "用户名", rule: "username")
        static let phone = Identity(name: "phone", label: "Phone number", labelZh: "手机号码", rule: "phone 11 15 CN")
    }

    /// One `rule = …` line per rule. Written out rather than with `joined(separator:)`,
    /// whose unspecialised form cost every start a scan of the conformance records (issue 29).
    static func ruleLines(_ rules: [String]) -> String {
        var lines = ""
        for rule in rules {
            if !lines.isEmpty { lines += "\n" }
            lines += "rule = " + rule
        }
        return lines
    }

    /// A form of an identity field and a `password` secret. A sign-up form also asks that the
    /// identity be available, caps the password's length and answers `password.acceptable`;
    /// a login form answers `password.entered`. A sign-up form without its own minimum
    /// password length gets `min-length 5`. `extra` holds further field sections.
    static func form(
        name: String, title: String, titleZh: String, action: Action, identity: Identity,
        passwordRules: [String], extra: String = ""
    ) -> String {
        let signup = action == .signup
        let identityRules = [identity.rule] + (signup ? ["available"] : [])
        let secretRules = ["max-bytes 4096"] + (signup ? ["max-length 1024"] : [])
            + (passwordRules.isEmpty && signup ? ["min-length 5"] : passwordRules)
        return """
            [form]
            name = \(name)
            title = \(title)
            title.zh-CN = \(titleZh)
            action = \(action.rawValue)
            identity = \(identity.name)
            secret = password
            submit = \(action.submit.en)
            submit.zh-CN = \(action.submit.zh)

            [field \(identity.name)]
            kind = \(identity.name)
            label = \(identity.label)
            label.zh-CN = \(identity.labelZh)
            \(ruleLines(identityRules))

            [field password]
            kind = secret
            label = Password
            label.zh-CN = 密码
            \(ruleLines(secretRules))
            ok = password.\(signup ? "acceptable" : "entered")

            """ + extra
    }
}
