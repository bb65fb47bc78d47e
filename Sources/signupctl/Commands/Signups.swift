import ArgumentParser
import SignupProtocol

extension SignupCtl {
    /// `signupctl signups [status|pause|resume]`: sign-up switched off during a spam flood,
    /// without a restart; logins and verify go on.
    struct Signups: FailingCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show, pause or resume sign-up (logins and verify are not affected).",
            discussion: """
                pause: every signup form refuses from then on, on every host sharing the \
                account store (within a second on PostgreSQL): open forms are told at once \
                ("Sign-up is paused, try again later", message id signup.paused; with \
                --message, signup.paused_note and your words as they are), and the setting \
                survives restarts. resume opens sign-up again. Pausing and resuming are for \
                root and members of signupd's administrators' group (--admin-group; the \
                package's signupd-admins): others get exit 1, code forbidden. JSON: \
                {"ok":true,"command":"signups","paused":BOOL,"message":TEXT,"since":UNIX,"byUid":N}
                """
        )

        enum Action: String, ExpressibleByArgument, CaseIterable {
            case status, pause, resume
        }

        @Argument(help: "status (the default), pause or resume.")
        var action: Action = .status

        @Option(help: ArgumentHelp("With pause: words shown to people in the paused forms (at most \(Request.maxSignupsMessageBytes) bytes), e.g. \"back at 14:00\".", valueName: "text"))
        var message: String?

        @OptionGroup var connection: ConnectionOptions

        func validate() throws {
            guard let message else { return }
            if action != .pause { throw ValidationError(Say.pick("--message goes with pause", "--message 只用于 pause")) }
            // As signupd would refuse it, but as bad usage (exit 64), before connecting.
            if message.utf8.count > Request.maxSignupsMessageBytes || message.unicodeScalars.contains(where: Request.disturbsDisplay) {
                throw ValidationError(Say.pick(
                    "--message must be at most \(Request.maxSignupsMessageBytes) bytes (UTF-8), without control characters, line separators or bidirectional overrides",
                    "--message 最多 \(Request.maxSignupsMessageBytes) 个字节，不能含控制字符、换行或双向文字控制符"))
            }
        }

        func body() throws(CommandFailure) {
            let daemon = try connection.connect()
            let pause: Bool? = switch action {
            case .status: nil
            case .pause: true
            case .resume: false
            }
            let reply = try daemon.reply(to: try daemon.request(.signups(pause: pause, message: message)))
            guard case .signups(let state, _) = reply.event else { throw .unexpected(reply, answering: "signups") }
            if connection.json {
                var envelope = JSONEnvelope(command: "signups")
                envelope.member("paused", state.paused)
                if let message = state.message { envelope.member("message", message) }
                if let since = state.since { envelope.member("since", since) }
                if let byUID = state.byUID { envelope.member("byUid", byUID) }
                envelope.emit()
                return
            }
            guard state.paused else {
                print(Say.pick("sign-up is open", "注册已开放"))
                return
            }
            var text = Say.pick("sign-up is paused", "注册已暂停")
            if let since = state.since { text += Say.pick(" since ", "，自 ") + StatusText.clock(since) }
            if let byUID = state.byUID { text += Say.pick(" by uid \(byUID)", "，由 uid \(byUID)") }
            if let message = state.message { text += ": \u{201C}\(Say.inert(message))\u{201D}" }
            print(text)
        }
    }
}
