/// The bridge's own words (everything else on the page is signupd's: titles, labels,
/// validation messages, results), in the locales it offers.
struct UIText: Sendable {
    let language: String
    let formsLabel: String
    let languageLabel: String
    let working: String
    let signedInAs: String
    let logOut: String
    let keptByServer: String
    /// Shown when the page's live connection does not work and the form posts plainly.
    let plainForm: String
    let skipToForm: String
    /// The title's word for a form sent back with problems.
    let check: String
    let notSignedIn: String
    let unavailable: String
    let badRequest: String

    static func of(_ locale: String) -> UIText {
        locale == "zh-CN" ? chinese : english
    }

    static let english = UIText(
        language: "English", formsLabel: "Forms", languageLabel: "Language", working: "Working…", signedInAs: "Signed in as",
        logOut: "Log out", keptByServer: "kept — type to change",
        plainForm: "Live checking is not available right now; the form still works: fill it in and submit.",
        skipToForm: "Skip to the form", check: "Please check the form", notSignedIn: "Not signed in",
        unavailable: "The sign-up service is not available right now. Please try again later.",
        badRequest: "This form has expired. Please try again.")
    static let chinese = UIText(
        language: "简体中文", formsLabel: "表单", languageLabel: "语言", working: "处理中…", signedInAs: "已登录：",
        logOut: "退出登录", keptByServer: "已保留，输入可修改",
        plainForm: "实时校验暂不可用，表单仍可使用：填写后提交即可。",
        skipToForm: "跳到表单", check: "请检查表单", notSignedIn: "未登录",
        unavailable: "注册服务暂时不可用，请稍后再试。",
        badRequest: "表单已过期，请重试。")
}
