/// The interactive form's own words — its key hints, button states and notices — in the
/// language the daemon chose for the session's labels and messages, so a `zh-CN` session is
/// not framed in English. The daemon's catalogues hold the form's text; these few strings
/// belong to this client. A locale without a table here gets English, as the daemon does.
struct ScreenText: Sendable {
    var keysRoomy: String
    var keysCompact: String
    var done: String
    var pressAnyKey: String
    var enterToSubmit: String
    var disabled: String
    var working: String
    var checking: String
    var waitingForChecks: String
    var typingIgnored: String
    var session: String
    var notSubmitted: @Sendable (_ label: String, _ reason: String) -> String
    var tooSmall: @Sendable (_ columns: Int, _ rows: Int, _ needColumns: Int, _ needRows: Int) -> String

    static let english = ScreenText(
        keysRoomy: "Tab/↑/↓ move · ←/→ Home End · Enter submit · Ctrl-U del to start · Esc quit",
        keysCompact: "Tab move · ←/→ edit · Enter submit · Esc quit",
        done: "Done · any key exits",
        pressAnyKey: "Press any key to exit.",
        enterToSubmit: "Enter to submit",
        disabled: "(disabled)",
        working: "working…",
        checking: "… checking",
        waitingForChecks: "Waiting for the checks to finish…",
        typingIgnored: "Typing is ignored here.",
        session: "session",
        notSubmitted: { label, reason in "Not submitted: \(label) — \(reason)" },
        tooSmall: { columns, rows, needColumns, needRows in
            "Terminal too small (\(columns)×\(rows)); need \(needColumns)×\(needRows). Esc quits."
        }
    )

    static let simplifiedChinese = ScreenText(
        keysRoomy: "Tab/↑/↓ 切换 · ←/→ Home End · Enter 提交 · Ctrl-U 删至行首 · Esc 退出",
        keysCompact: "Tab 切换 · ←/→ 编辑 · Enter 提交 · Esc 退出",
        done: "完成 · 按任意键退出",
        pressAnyKey: "按任意键退出。",
        enterToSubmit: "按 Enter 提交",
        disabled: "（不可用）",
        working: "处理中…",
        checking: "… 检查中",
        waitingForChecks: "正在等待检查完成…",
        typingIgnored: "此处忽略输入。",
        session: "会话",
        notSubmitted: { label, reason in "未提交：\(label) — \(reason)" },
        tooSmall: { columns, rows, needColumns, needRows in
            "终端太小（\(columns)×\(rows)），至少需要 \(needColumns)×\(needRows)。按 Esc 退出。"
        }
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
