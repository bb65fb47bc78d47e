import SignupProtocol
/// signupctl's own words outside the form — errors, notices, prompts — in the user's
/// language (`LC_ALL`, `LC_MESSAGES`, `LANG`; `UserLocale`): Simplified Chinese where
/// `ScreenText` would frame the form in it, English otherwise. Each message is written
/// once, its two texts side by side at the one place that says it. `--help` stays English,
/// as systemctl's does. Program names, paths, option names and commands to type stay as
/// they must be typed.
enum Say {
    /// Set once at start from the environment (tests may set it).
    nonisolated(unsafe) static var chinese = ScreenText.forLocale(UserLocale.current).isSimplifiedChinese

    /// `english` or `chinese`, by the user's language.
    static func pick(_ english: @autoclosure () -> String, _ chinese: @autoclosure () -> String) -> String {
        Say.chinese ? chinese() : english()
    }

    /// Why signupd said `bye` or closed, for the person: its documented reasons
    /// (PROTOCOL.md "bye") in their language, anything else as sent.
    static func byeReason(_ reason: String) -> String {
        guard chinese else { return reason }
        let known: [(prefix: String, text: String)] = [
            ("shutdown", "服务正在停止"), ("restarted", "服务已重新启动，请重新打开表单"), ("idle", "长时间无操作，连接已关闭"),
            ("stuck", "连接无响应"), ("slow consumer", "读取过慢，连接已关闭"), ("over budget", "服务内存紧张，连接已关闭"),
            ("displaced", "连接数已满，本连接让位于其他用户"), ("start failed", "服务无法启动"),
        ]
        return known.first { reason.hasPrefix($0.prefix) }?.text ?? "（\(reason)）"
    }
}

extension Say {
    /// An account name as a person reads it: a phone number or an e-mail address without
    /// its `tel:` or `mailto:` (the `--json` output keeps the name as the daemon sent it).
    static func shown(user: String) -> String {
        for scheme in ["tel:", "mailto:"] where user.hasPrefix(scheme) { return String(user.dropFirst(scheme.count)) }
        return user
    }

    /// Text another party chose (a front end's client name, an operator's message), safe to
    /// print on a terminal: what would move the cursor or reorder the line is shown as `\u{…}`.
    static func inert(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: { Request.disturbsDisplay($0) || $0.properties.generalCategory == .format }) else { return text }
        var shown = ""
        for scalar in text.unicodeScalars {
            if Request.disturbsDisplay(scalar) || scalar.properties.generalCategory == .format {
                shown += "\\u{" + String(scalar.value, radix: 16) + "}"
            } else {
                shown.unicodeScalars.append(scalar)
            }
        }
        return shown
    }

    /// "message: value" with the colon of the user's language.
    static func labelled(_ label: String, _ value: String) -> String {
        chinese ? "\(label)：\(value)" : "\(label): \(value)"
    }

    /// Why signupd ended a form (`closed`'s reason) in Chinese.
    static func closedReason(_ reason: String) -> String {
        guard reason.hasPrefix("idle: no request for ") else { return "（\(reason)）" }
        let seconds = reason.dropFirst("idle: no request for ".count).prefix { $0.isNumber }
        return "\(seconds) 秒内没有任何操作"
    }

    /// An `error` code of the daemon's (PROTOCOL.md "Errors") said in Chinese; the English
    /// side shows the daemon's own message with its code.
    static func refusal(_ code: String) -> String {
        let texts: [String: String] = [
            "limit_exceeded": "已达到上限（连接或会话过多），请稍后再试",
            "rate_limited": "请求过于频繁，请稍后再试",
            "forbidden": "无权访问该会话",
            "shutting_down": "服务正在停止，请稍后再试",
            "invalid_token": "令牌无效或已过期",
            "store_unavailable": "账户存储暂时不可用，请稍后再试",
            "not_ready": "表单尚未填写完整",
            "finished": "表单已经提交过",
            "unknown_form": "服务没有这个表单",
            "unknown_field": "表单没有这个字段",
            "unknown_session": "会话不存在或已结束",
            "no_session": "当前连接没有打开的表单",
            "value_too_long": "输入过长",
            "invalid_request": "服务无法处理该请求", "invalid_json": "服务无法处理该请求", "unknown_op": "服务版本较旧，不支持该操作",
            "line_too_long": "服务无法处理该请求", "session_open": "服务无法处理该请求", "internal": "服务内部错误",
        ]
        return texts[code] ?? "服务拒绝了请求"
    }
}

extension ScreenText {
    var isSimplifiedChinese: Bool { done == ScreenText.simplifiedChinese.done }
}
