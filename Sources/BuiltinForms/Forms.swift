/// The forms signupd serves without configuration, in the operators' file format
/// (`FormFile`; README "Forms"). An operator's `/etc/signupd/forms.d/NAME.form` with the
/// same `name` replaces one. Kept as text so that they are read exactly like an operator's.
public enum BuiltinForms {
    /// By file name, in the order `describe` lists them.
    public static let files: [(name: String, text: String)] = [
        ("signup.form", signup), ("login.form", login), ("phone-signup.form", phoneSignup), ("phone-login.form", phoneLogin),
    ]

    /// The sign-up form of the RxSwift GitHubSignup example.
    static let signup = """
        [form]
        name = signup
        title = Sign up
        title.zh-CN = 注册
        action = signup
        identity = username
        secret = password
        submit = Sign up
        submit.zh-CN = 注册

        [field username]
        kind = username
        label = Username
        label.zh-CN = 用户名
        rule = username
        rule = available

        [field password]
        kind = secret
        label = Password
        label.zh-CN = 密码
        rule = max-bytes 4096
        rule = max-length 1024
        rule = min-length 5
        ok = password.acceptable

        [field repeatedPassword]
        kind = secret
        label = Repeat password
        label.zh-CN = 再次输入密码
        rule = equals password
        ok = password.repeated

        """

    /// The login form of the RxSwift login demos.
    static let login = """
        [form]
        name = login
        title = Log in
        title.zh-CN = 登录
        action = login
        identity = username
        secret = password
        submit = Log in
        submit.zh-CN = 登录

        [field username]
        kind = username
        label = Username
        label.zh-CN = 用户名
        rule = username

        [field password]
        kind = secret
        label = Password
        label.zh-CN = 密码
        rule = max-bytes 4096
        ok = password.entered

        """

    /// RxLoginTest's phone number sign-up: at least 11 digits, a password of at least 6.
    static let phoneSignup = """
        [form]
        name = phone-signup
        title = Sign up with a phone number
        title.zh-CN = 手机号注册
        action = signup
        identity = phone
        secret = password
        submit = Sign up
        submit.zh-CN = 注册

        [field phone]
        kind = phone
        label = Phone number
        label.zh-CN = 手机号码
        rule = phone 11 15
        rule = available

        [field password]
        kind = secret
        label = Password
        label.zh-CN = 密码
        rule = max-bytes 4096
        rule = max-length 1024
        rule = min-length 6 as password.short
        ok = password.acceptable

        """

    /// RxLoginTest's login: a phone number of at least 11 digits ("号码长度不足") and a
    /// password of at least 6 characters ("密码长度不足"); login returns a token.
    static let phoneLogin = """
        [form]
        name = phone-login
        title = Log in with a phone number
        title.zh-CN = 手机号登录
        action = login
        identity = phone
        secret = password
        submit = Log in
        submit.zh-CN = 登录

        [field phone]
        kind = phone
        label = Phone number
        label.zh-CN = 手机号码
        rule = phone 11 15

        [field password]
        kind = secret
        label = Password
        label.zh-CN = 密码
        rule = max-bytes 4096
        rule = min-length 6 as password.short
        ok = password.entered

        """
}
