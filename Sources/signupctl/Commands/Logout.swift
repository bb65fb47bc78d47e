import ArgumentParser

extension SignupCtl {
    struct Logout: FailingCommand {
        static let configuration = CommandConfiguration(
            abstract: "Revoke a login token (log out everywhere).",
            discussion: """
                The token is read from the first line of standard input when it is not \
                given or given as "-", as in `printf '%s\\n' "$TOKEN" | signupctl logout`. \
                From then on `verify` refuses it, on this host and on every host sharing \
                the account store. Exit 1 (code invalid_token) for an unknown, malformed or \
                already expired token; exit 64 when standard input has no token. JSON: \
                {"ok":true,"command":"logout"}
                """
        )

        @Argument(help: "The token `signupctl login` printed, or - (the default) to read it from standard input.")
        var token: String?

        @OptionGroup var connection: ConnectionOptions

        func body() throws(CommandFailure) {
            let token = try TokenInput.read(self.token, command: "logout")
            let daemon = try connection.connect()
            let reply = try daemon.reply(to: try daemon.request(.logout(token: token)))
            guard case .revoked? = reply.event else { throw .unexpected(reply, answering: "logout") }
            if connection.json {
                JSONEnvelope(command: "logout").emit()
            } else {
                print(Say.pick("logged out", "已退出登录"))
            }
        }
    }
}
