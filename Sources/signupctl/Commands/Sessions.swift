import ArgumentParser
import SignupProtocol

extension SignupCtl {
    /// `signupctl sessions`
    struct Sessions: FailingCommand {
        static let configuration = CommandConfiguration(
            abstract: "List your live form sessions (for `monitor --session`).",
            discussion: """
                Only sessions opened by your own user are listed, oldest first. VIEWS counts the \
                connections attached besides the one that opened it. signupd answers in pages \
                (at most 500 sessions each); signupctl asks for page after page and lists them \
                all, in the table and in JSON alike. JSON: {"ok":true,"command":"sessions",\
                "sessions":[{"session":ID,"form":F,"ageSeconds":N,"views":N}]}
                """
        )

        @Flag(help: "Every user's sessions, with their owner (root and members of signupd's administrators' group).")
        var all = false

        @OptionGroup var connection: ConnectionOptions

        func body() throws(CommandFailure) {
            let summaries = try Self.list(connection, all: all)
            if connection.json {
                var envelope = JSONEnvelope(command: "sessions")
                envelope.member("sessions", json: .array(summaries.map { summary in
                    .object(JSONObject([
                        .init(key: "session", value: .string(summary.session)),
                        .init(key: "form", value: .string(summary.form)),
                        .init(key: "ageSeconds", value: .number(String(summary.ageSeconds))),
                        .init(key: "views", value: .number(String(summary.views))),
                    ] + (summary.detachedSeconds.map { [.init(key: "detachedSeconds", value: .number(String($0)))] } ?? [])
                      + (summary.uid.map { [.init(key: "uid", value: .number(String($0)))] } ?? [])
                      + (summary.client.map { [.init(key: "client", value: .string($0))] } ?? [])))
                }))
                envelope.emit()
                return
            }
            guard !summaries.isEmpty else {
                print(Say.pick("no live sessions", "没有进行中的会话"))
                return
            }
            // Columns as wide as their widest entry (a form name may be long: phone-signup).
            var headers = Say.chinese ? ["会话", "表单", "时长", "查看"] : ["SESSION", "FORM", "AGE", "VIEWS"]
            var rows = summaries.map { summary in
                let age = Self.age(summary.ageSeconds) + (summary.detachedSeconds.map { Say.pick(" (dropped \(Self.age($0)) ago)", "（断开 \(Self.age($0))）") } ?? "")
                return [summary.session, summary.form, age, String(summary.views)]
            }
            if all {
                headers.insert(Say.chinese ? "用户" : "OWNER", at: 0)
                rows = zip(summaries, rows).map { summary, row in ["uid \(summary.uid ?? -1)" + (summary.client.map { " \(Say.inert($0))" } ?? "")] + row }
            }
            let last = headers.count - 1
            let widths = (0..<last).map { column in ([headers] + rows).map { DisplayWidth.of($0[column]) }.max()! + 2 }
            for row in [headers] + rows {
                print((0..<last).map { row[$0] + String(repeating: " ", count: widths[$0] - DisplayWidth.of(row[$0])) }.joined() + row[last])
            }
        }

        /// The caller's live sessions (every user's with `all`), as the daemon lists them:
        /// page after page, each asked for once the previous one has come, until the last.
        static func list(_ options: ConnectionOptions, all: Bool = false) throws(CommandFailure) -> [SessionSummary] {
            let daemon = try options.connect()
            var sessions: [SessionSummary] = []
            var page = SessionsPage(limit: SessionsPage.maxLimit)
            while true {
                let reply = try daemon.reply(to: try daemon.request(all ? .allSessions(page) : .sessions(page)))
                guard case .sessionList(let listed, let next, _) = reply.event else { throw .unexpected(reply, answering: "sessions") }
                sessions += listed
                // A server that does not page yet sends everything at once, without `next`.
                guard let next, !listed.isEmpty else { return sessions }
                page.after = next
            }
        }

        static func age(_ seconds: Int) -> String {
            Say.chinese
                ? (seconds < 60 ? "\(seconds)秒" : seconds < 3600 ? "\(seconds / 60)分\(seconds % 60)秒" : "\(seconds / 3600)时\(seconds / 60 % 60)分")
                : (seconds < 60 ? "\(seconds)s" : seconds < 3600 ? "\(seconds / 60)m\(seconds % 60)s" : "\(seconds / 3600)h\(seconds / 60 % 60)m")
        }
    }
}
