import CommandLineHints
/// Lets the shared options come before the subcommand, as with `systemctl --user status`
/// or `swaymsg -s PATH`: `signupctl --socket X --json ping` becomes `signupctl ping
/// --socket X --json`. It also catches a mistyped subcommand early, with a suggestion.
enum ArgumentNormalizer {
    /// Options every subcommand takes, and the name of the value each takes (nil: none).
    static let shared: [String: String?] = ["--socket": "path", "--timeout": "seconds", "--json": nil]

    /// How a Chinese "unknown command" message begins (its --json code is unknown_command).
    static let unknownCommandChinese = "未知命令"

    enum Outcome: Equatable {
        case arguments([String])
        /// Not a subcommand, or none after the shared options: the message to print (exit 64).
        case usage(String)
    }

    /// `arguments` without the program name.
    static func normalize(_ arguments: [String], subcommands: [String]) -> Outcome {
        var leading: [String] = []
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            let name = argument.split(separator: "=", maxSplits: 1).first.map(String.init) ?? argument
            guard let valueName = shared[name] else { break }
            leading.append(argument)
            if let valueName, !argument.contains("=") {
                // The parser would blame the first option it cannot place; name the one short of its value.
                guard index + 1 < arguments.count else { return .usage(Say.pick("Missing value for '\(name) <\(valueName)>'", "\(name) 缺少值")) }
                leading.append(arguments[index + 1])
                index += 1
            }
            index += 1
        }
        guard index < arguments.count else {
            if leading.isEmpty { return .arguments(arguments) }  // no arguments: the parser prints help
            return .usage(Say.pick(
                "no command after \(leading.joined(separator: " ")) (commands: \(subcommands.joined(separator: ", ")); see signupctl --help)",
                "\(leading.joined(separator: " ")) 之后缺少命令（命令：\(subcommands.map { "`\($0)`" }.joined(separator: "、"))；见 `signupctl --help`）"))
        }
        let verb = arguments[index]
        // Other options (--help, --version, --generate-completion-script) go to the parser as they are.
        if verb.hasPrefix("-") { return .arguments(arguments) }
        guard subcommands.contains(verb) || verb == "help" else {
            let guess = Suggestion.closest(to: verb, among: subcommands)
            return .usage(Say.pick(
                "unknown command '\(verb)'" + (guess.map { "; did you mean '\($0)'?" } ?? "") + " (commands: \(subcommands.joined(separator: ", ")); see signupctl --help)",
                Self.unknownCommandChinese + "“\(verb)”" + (guess.map { "；是不是要用 `\($0)`？" } ?? "")
                    + "（命令：\(subcommands.map { "`\($0)`" }.joined(separator: "、"))；见 `signupctl --help`）"))
        }
        if verb == "help", let topic = arguments[(index + 1)...].first(where: { !$0.hasPrefix("-") }), !subcommands.contains(topic) {
            var message = "no help on '\(topic)': not a command"
            if let guess = Suggestion.closest(to: topic, among: subcommands) { message += "; did you mean '\(guess)'?" }
            return .usage(message + " (commands: \(subcommands.joined(separator: ", ")))")
        }
        return .arguments([verb] + leading + protectingTokens(Array(arguments[(index + 1)...]), of: verb))
    }

    /// A login token is 43 characters of base64url and may begin with "-" (1 in 64 do): given
    /// to `verify` or `logout` as an argument it would be read as options — `-h…` even as
    /// help, exiting 0 with the token untouched. Such an argument moves to the end, after "--".
    static func protectingTokens(_ rest: [String], of verb: String) -> [String] {
        guard ["verify", "logout"].contains(verb), !rest.contains("--"),
            let at = rest.firstIndex(where: isDashedToken)
        else { return rest }
        return Array(rest[..<at]) + rest[(at + 1)...] + ["--", rest[at]]
    }

    private static func isDashedToken(_ argument: String) -> Bool {
        argument.utf8.count == 43 && argument.hasPrefix("-")
            && argument.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "-" || $0 == "_" }
    }

}
