/// A login token for `verify` and `logout`: the argument, or (when it is absent or "-")
/// the first line of standard input, where other local users cannot see it (an argument
/// shows in /proc/PID/cmdline).
enum TokenInput {
    static func read(_ argument: String?, command: String) throws(CommandFailure) -> String {
        let given = argument ?? "-"
        guard given == "-" else { return given }
        let token = String((FormInputOptions.firstLine(of: 0) ?? "").filter { $0 != " " && $0 != "\t" })
        guard !token.isEmpty else {
            throw CommandFailure(.usage, Say.pick(
                "no token on standard input (give it there, as in printf '%s\\n' \"$TOKEN\" | signupctl \(command))",
                "标准输入中没有令牌（请从那里传入，例如 `printf '%s\\n' \"$TOKEN\" | signupctl \(command)`）"), code: "usage")
        }
        return token
    }
}
