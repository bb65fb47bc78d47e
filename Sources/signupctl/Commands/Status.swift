import ArgumentParser
import SignupProtocol

#if canImport(Glibc)
import Glibc
#endif

extension SignupCtl {
    /// `signupctl status`: the daemon as an operator sees it, read the way `systemctl status` is.
    struct Status: FailingCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show signupd's state: version, uptime, store, connections, sessions, rates, latency, the busiest users.",
            discussion: """
                Root and members of signupd's administrators' group (--admin-group; the \
                package's signupd-admins) see everything. Anyone else sees the daemon's \
                health and their own share: their connections and sessions, never other \
                users'. Rates count signups and logins ended in the last 1, 5 and 15 minutes \
                by outcome; latencies are since the process started (PROTOCOL.md, "status"). \
                JSON: {"ok":true,"command":"status","status":{...the daemon's status event...}}
                """
        )

        @OptionGroup var connection: ConnectionOptions

        func body() throws(CommandFailure) {
            let daemon = try connection.connect()
            let reply = try daemon.reply(to: try daemon.request(.status))
            guard case .status(let report, _) = reply.event else { throw .unexpected(reply, answering: "status") }
            if connection.json {
                var envelope = JSONEnvelope(command: "status")
                envelope.member("status", json: .object(report))
                envelope.emit()
                return
            }
            for line in StatusText.lines(report) { print(line) }
        }
    }
}

/// `status` as text (English or Chinese), from the daemon's report.
enum StatusText {
    static func lines(_ report: JSONObject) -> [String] {
        var lines: [String] = []
        let scope = report["scope"]?.stringValue ?? "own"
        let version = report["version"]?.stringValue ?? "signupd"
        let pid = int(report["pid"]) ?? 0
        let uptime = duration(int(report["uptimeSeconds"]) ?? 0)
        lines.append(Say.pick("● \(version) — serving (pid \(pid), up \(uptime))", "● \(version) — 运行中（进程 \(pid)，已运行 \(uptime)）"))
        func row(_ english: String, _ chinese: String, _ value: String) {
            let label = Say.pick(english, chinese)
            // A continuation row (no label) lines up under the values, without a colon.
            let separator = label.isEmpty ? "  " : Say.pick(": ", "：")
            lines.append(String(repeating: " ", count: max(0, 16 - DisplayWidth.of(label))) + label + separator + value)
        }
        if let store = report["store"]?.objectValue {
            let name = [store["store"]?.stringValue, store["location"]?.stringValue].compactMap { $0 }.joined(separator: " ")
            row("Store", "账户存储", health(store, name: name.isEmpty ? "?" : name))
        }
        if let service = report["availabilityService"]?.objectValue {
            row("Availability", "可用性服务", health(service, name: service["url"]?.stringValue ?? "?"))
        }
        if let phone = report["phoneNumbers"]?.objectValue {
            // The file opened, as an administrator sees it (the store's location likewise).
            row("Phone numbers", "电话号码", health(phone, name: ["libphonenumber", phone["library"]?.stringValue].compactMap { $0 }.joined(separator: " ")))
        } else {
            // signupd opens it just after it starts: a status asked in that instant (the
            // one that started it, often) has no answer yet (helper-33).
            row("Phone numbers", "电话号码", Say.pick("libphonenumber — not looked at yet (signupd has just started; ask again)", "libphonenumber — 尚未检查（signupd 刚启动，请稍后再查）"))
        }
        if let signups = report["signups"]?.objectValue {
            if signups["paused"]?.boolValue == true {
                var text = Say.pick("PAUSED", "已暂停")
                if let since = int(signups["since"]) { text += Say.pick(" since ", "，自 ") + clock(since) }
                if let uid = int(signups["byUid"]) { text += Say.pick(" by uid \(uid)", "，由 uid \(uid)") }
                if let message = signups["message"]?.stringValue { text += ": \u{201C}\(Say.inert(message))\u{201D}" }
                row("Sign-up", "注册", text)
            } else {
                row("Sign-up", "注册", Say.pick("open", "开放"))
            }
        }
        if let forms = report["forms"]?.objectValue, forms["source"]?.stringValue == "last-good" {
            let errors = int(forms["errors"]) ?? 0
            let saved = int(forms["savedAt"]).map(clock) ?? "?"
            row("Forms", "表单", Say.pick(
                "forms.d/messages.d have \(errors) error\(errors == 1 ? "" : "s"); serving the last configuration that loaded (saved \(saved))",
                "forms.d/messages.d 有 \(errors) 处错误；正在使用上次成功加载的配置（保存于 \(saved)）"))
            if let first = forms["firstError"]?.stringValue { row("", "", Say.inert(first)) }
        }
        if scope == "all" {
            let detached = int(report["detachedSessions"]) ?? 0
            row("Clients", "客户端", Say.pick(
                "\(int(report["connections"]) ?? 0) connections, \(int(report["sessions"]) ?? 0) sessions (\(detached) waiting for resume)",
                "\(int(report["connections"]) ?? 0) 个连接，\(int(report["sessions"]) ?? 0) 个会话（\(detached) 个等待恢复）"))
            if let queues = report["queues"]?.objectValue {
                row("Hash queue", "哈希队列", "\(int(queues["hashQueueDepth"]) ?? 0) / \(int(queues["hashQueueLimit"]) ?? 0)")
                if let buffered = int(queues["bufferedBytes"]), let budget = int(queues["bufferedBytesBudget"]) {
                    row("Buffered", "缓冲", Say.pick("\(buffered) of \(budget) bytes", "\(buffered) / \(budget) 字节"))
                }
            }
            let rates = report["rates"]?.arrayValue?.compactMap(\.objectValue) ?? []
            for action in ["signup", "login"] {
                let mine = rates.filter { $0["action"]?.stringValue == action }
                let text = mine.isEmpty ? Say.pick("none", "无")
                    : mine.map { "\($0["outcome"]?.stringValue ?? "?") \(int($0["last1m"]) ?? 0)/\(int($0["last5m"]) ?? 0)/\(int($0["last15m"]) ?? 0)" }.joined(separator: ", ")
                row(action == "signup" ? "Signups 1/5/15m" : "Logins 1/5/15m", action == "signup" ? "注册 1/5/15分" : "登录 1/5/15分", text)
            }
            if let latency = report["latency"]?.objectValue {
                for (key, english, chinese) in [("validation", "Validation", "校验"), ("hash", "Hashing", "哈希"), ("availabilityCheck", "Name checks", "用户名检查")] {
                    guard let figures = latency[key]?.objectValue, let count = int(figures["count"]), count > 0 else { continue }
                    row(english, chinese, "p50 \(figures["p50Ms"].flatMap(number) ?? "?") ms, p99 \(figures["p99Ms"].flatMap(number) ?? "?") ms (\(count))")
                }
            }
            let busiest = report["busiest"]?.arrayValue?.compactMap(\.objectValue) ?? []
            for (index, peer) in busiest.enumerated() {
                let who = Say.inert(peer["peer"]?.stringValue ?? "uid \(int(peer["uid"]) ?? 0)")
                let buffered = int(peer["bufferedBytes"]) ?? 0
                row(index == 0 ? "Busiest" : "", index == 0 ? "最繁忙" : "", Say.pick(
                    "\(who): \(int(peer["connections"]) ?? 0) connections, \(int(peer["sessions"]) ?? 0) sessions" + (buffered > 0 ? ", \(buffered) bytes buffered" : ""),
                    "\(who)：\(int(peer["connections"]) ?? 0) 个连接，\(int(peer["sessions"]) ?? 0) 个会话" + (buffered > 0 ? "，缓冲 \(buffered) 字节" : "")))
            }
        }
        if let own = report["own"]?.objectValue {
            let who = "uid \(int(own["uid"]) ?? 0)" + (own["client"]?.stringValue.map { " client \($0)" } ?? "")
            row("You", "你", Say.pick(
                "\(who): \(int(own["connections"]) ?? 0) connections (this one included), \(int(own["sessions"]) ?? 0) sessions",
                "\(who)：\(int(own["connections"]) ?? 0) 个连接（含本连接），\(int(own["sessions"]) ?? 0) 个会话"))
        }
        if scope != "all" {
            lines.append(Say.pick(
                "(other users' figures are shown to root and members of signupd's administrators' group; daemon-wide totals are in the metrics)",
                "（其他用户的数据只向 root 和 signupd 管理员组成员显示；全局总数见指标）"))
        }
        return lines
    }

    private static func health(_ object: JSONObject, name: String) -> String {
        if object["healthy"]?.boolValue == false {
            return name + Say.pick(" — UNAVAILABLE: ", " — 不可用：") + (object["cause"]?.stringValue ?? "?")
        }
        return name + Say.pick(" — healthy", " — 正常")
    }

    private static func int(_ value: JSONValue?) -> Int? {
        guard case .number(let text) = value else { return nil }
        return Int(text)
    }

    private static func number(_ value: JSONValue) -> String? {
        guard case .number(let text) = value else { return nil }
        return text
    }

    static func duration(_ seconds: Int) -> String {
        let (days, hours, minutes) = (seconds / 86400, seconds / 3600 % 24, seconds / 60 % 60)
        if days > 0 { return Say.pick("\(days)d \(hours)h", "\(days)天\(hours)时") }
        if hours > 0 { return Say.pick("\(hours)h \(minutes)min", "\(hours)时\(minutes)分") }
        if minutes > 0 { return Say.pick("\(minutes)min \(seconds % 60)s", "\(minutes)分\(seconds % 60)秒") }
        return Say.pick("\(seconds)s", "\(seconds)秒")
    }

    /// Local time of a Unix timestamp, as `date` prints it (`2026-11-26 13:05:00 UTC`).
    static func clock(_ seconds: Int) -> String {
        var time = time_t(seconds)
        var parts = tm()
        localtime_r(&time, &parts)
        var buffer = [CChar](repeating: 0, count: 64)
        let count = strftime(&buffer, buffer.count, "%Y-%m-%d %H:%M:%S %Z", &parts)
        return String(decoding: buffer.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
