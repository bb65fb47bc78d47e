/// A login token for `verify` and `logout`: the argument, or (when it is absent or "-")
/// the first line of standard input, where other local users cannot see it (an argument
/// shows in /proc/PID/cmdline).
enum TokenInput {
    static func read(_ argument: String?, command: String) throws(CommandFailure) -> String {
        let given = argument ?? "-"
        let token = given != "-" ? given : String((FormInputOptions.firstLine(of: 0) ?? "").filter { $0 != " " && $0 != "\t" })
        // No token is this long (43 characters): refused here, not sent as a line the daemon
        // would discard whole (line_too_long carries no request id to answer).
        guard token.utf8.count <= 1024 else {
            throw CommandFailure(.refused, Say.pick("unknown, malformed or expired token", "令牌无效或已过期"), code: "invalid_token")
        }
        guard given == "-" else { return token }
        guard !token.isEmpty else {
            throw CommandFailure(.usage, Say.pick(
                "no token on standard input (give it there, as in printf '%s\\n' \"$TOKEN\" | signupctl \(command))",
                "标准输入中没有令牌（请从那里传入，例如 `printf '%s\\n' \"$TOKEN\" | signupctl \(command)`）"), code: "usage")
        }
        return token
    }
}
