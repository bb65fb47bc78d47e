import ArgumentParser

extension SignupCtl {
    struct Logout: FailingCommand {
        static let configuration = CommandConfiguration(
            abstract: "Revoke one login token: verify refuses it from then on, on every host sharing the store.",
            discussion: """
                The token is read from the first line of standard input when it is not \
                given or given as "-", as in `printf '%s\\n' "$TOKEN" | signupctl logout` \
                (an argument is visible to every local user in /proc/PID/cmdline; a token \
                beginning with "-" is taken as the token). Only that token is revoked, not \
                the user's others. Exit 1 (code invalid_token) for an unknown, malformed or \
                already expired token; 75 when the account store is unavailable (nothing \
                was revoked: try again); 64 when standard input has no token. JSON: \
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
            guard case .revoked = reply.event else { throw .unexpected(reply, answering: "logout") }
            if connection.json {
                JSONEnvelope(command: "logout").emit()
            } else {
                print(Say.pick("logged out", "已退出登录"))
            }
        }
    }
}
