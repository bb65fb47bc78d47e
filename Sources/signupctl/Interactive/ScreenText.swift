/// The interactive form's own words — its key hints, button states and notices — in the
/// language the daemon chose for the session's labels and messages, so a `zh-CN` session is
/// not framed in English. The daemon's catalogues hold the form's text; these few strings
/// belong to this client. A locale without a table here gets English, as the daemon does.
struct ScreenText: Sendable {
    var keysRoomy: String
    var keysCompact: String
    var done: String
    /// Beside the button once the form succeeded.
    var finished: String
    /// Before a login's token in the result line.
    var token: String
    /// Ctrl-Z was pressed: the form does not stop (it would leave the terminal raw).
    var noSuspend: String
    var enterToSubmit: String
    var disabled: String
    var working: String
    var checking: String
    var waitingForChecks: String
    var typingIgnored: String
    var session: String
    var notSubmitted: @Sendable (_ label: String, _ reason: String) -> String
    /// How to quit first, then why: a window too small shows as much of it as fits.
    var tooSmall: @Sendable (_ columns: Int, _ rows: Int, _ needColumns: Int, _ needRows: Int) -> String
    /// The form's heading line: its title and the daemon's name and version.
    var header: @Sendable (_ title: String, _ server: String) -> String
    /// The first line of the form on a terminal without cursor addressing (`TERM=dumb`).
    var lineModeHeader: @Sendable (_ submitLabel: String, _ server: String, _ session: String) -> String
    /// A field left empty (line mode).
    var required: @Sendable (_ label: String) -> String

    static let english = ScreenText(
        keysRoomy: "Tab/↑/↓ move · ←/→ Home End · Enter submit · Ctrl-U del to start · Esc quit",
        keysCompact: "Tab move · ←/→ edit · Enter submit · Esc quit",
        done: "Done · any key exits",
        finished: "done",
        token: "token:",
        noSuspend: "Ctrl-Z does not suspend this form: finish it, or Esc to quit.",
        enterToSubmit: "Enter to submit",
        disabled: "(disabled)",
        working: "working…",
        checking: "… checking",
        waitingForChecks: "Waiting for the checks to finish…",
        typingIgnored: "Typing is ignored here.",
        session: "session",
        notSubmitted: { label, reason in "Not submitted: \(label) — \(reason)" },
        tooSmall: { columns, rows, needColumns, needRows in
            "Esc quits. Terminal too small (\(columns)×\(rows)); need \(needColumns)×\(needRows)."
        },
        header: { title, server in "\(title) — \(server)" },
        lineModeHeader: { label, server, session in "\(label) — \(server) (session \(session); Ctrl-C or Ctrl-D cancels)" },
        required: { label in "\(label) is required" }
    )

    static let simplifiedChinese = ScreenText(
        keysRoomy: "Tab/↑/↓ 切换 · ←/→ Home End · Enter 提交 · Ctrl-U 删至行首 · Esc 退出",
        keysCompact: "Tab 切换 · ←/→ 编辑 · Enter 提交 · Esc 退出",
        done: "完成 · 按任意键退出",
        finished: "完成",
        token: "令牌：",  // the token follows after a space: it must stay whole to copy
        noSuspend: "此表单不能用 Ctrl-Z 挂起：请填完，或按 Esc 退出。",
        enterToSubmit: "按 Enter 提交",
        disabled: "（不可用）",
        working: "处理中…",
        checking: "… 检查中",
        waitingForChecks: "正在等待检查完成…",
        typingIgnored: "此处忽略输入。",
        session: "会话",
        notSubmitted: { label, reason in "未提交：\(label) — \(reason)" },
        tooSmall: { columns, rows, needColumns, needRows in
            "按 Esc 退出。终端太小（\(columns)×\(rows)），至少需要 \(needColumns)×\(needRows)。"
        },
        // The daemon's name is not a word of the form: the heading is the form's title.
        header: { title, _ in title },
        lineModeHeader: { label, _, session in "\(label)（会话 \(session)；按 Ctrl-C 或 Ctrl-D 取消）" },
        required: { label in "请填写\(label)" }
    )

    /// The table for a resolved locale (`opened`'s `locale`): Simplified Chinese for `zh`,
    /// `zh-CN`, `zh-SG`, `zh-Hans…`; English for everything else, Traditional included (the
    /// daemon serves those in English too, so the frame matches the form).
    static func forLocale(_ tag: String?) -> ScreenText {
        guard let tag else { return .english }
        let parts = tag.lowercased().split(separator: "-").map(String.init)
        guard parts.first == "zh" else { return .english }
        let rest = Set(parts.dropFirst())
        if rest.contains("hant") || rest.contains("tw") || rest.contains("hk") || rest.contains("mo") { return .english }
        return .simplifiedChinese
    }
}
