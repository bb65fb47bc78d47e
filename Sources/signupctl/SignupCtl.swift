import ArgumentParser

#if canImport(Glibc)
import Glibc
#endif

/// `signupctl`: the reference client of signupd.
struct SignupCtl: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "signupctl",
        abstract: "Talk to signupd: fill in sign-up and login forms, script them, watch sessions.",
        usage: "signupctl [--socket <path>] [--timeout <seconds>] [--json] <subcommand> [<options>]",
        discussion: """
            On a terminal, `signupctl signup` and `signupctl login` open a full-screen form that \
            signupd validates as you type; it draws on /dev/tty, so `TOKEN=$(signupctl login)` \
            works. With TERM=dumb it asks field by field instead. With --username (or when \
            standard input is not a terminal) they run non-interactively for scripts.

            --socket, --timeout and --json may be given before or after the command \
            (`signupctl --socket /run/signupd/signupd.sock ping`).

            JSON OUTPUT: with --json every command prints exactly one JSON object on standard \
            output, success or failure: {"ok":true,"command":NAME,...} with the command's \
            members, or {"ok":false,"command":NAME,"error":{"code":CODE,"message":TEXT,"exitCode":N}}. \
            CODE is a protocol error code (invalid_token, forbidden, unknown_session, not_ready, \
            rate_limited, ...) or one of refused, invalid_input, no_daemon, permission_denied, \
            not_a_socket, connection_refused, unreachable, start_failed, timeout, protocol_error, disconnected, \
            not_signupd, usage, unknown_command, cancelled. `monitor --json` prints one such object per event (a result's own ok is "eventOk"); \
            `--version --json` prints {"ok":true,"command":"version","version":V} and \
            `help --json` {"ok":true,"command":"help","help":TEXT}. The exit code is \
            the same as without --json.

            EXIT CODES: 0 success; 1 the daemon said no (wrong password, name taken at submit, \
            invalid token); 2 the input is invalid (a field failed validation); 3 signupd cannot \
            be reached, or could not finish starting; 4 the conversation broke (timeout, unexpected reply); 75 the account store is \
            unavailable or phone numbers cannot be checked, try again later (--json code "unavailable"); 64 bad usage \
            (unknown command or option, missing or invalid argument); 130 the interactive form or a prompt \
            was left with Esc or Ctrl-C.
            """,
        version: "0.1.0",
        subcommands: [Signup.self, Login.self, Describe.self, Ping.self, Verify.self, Logout.self, Sessions.self, Status.self, Signups.self, Monitor.self, Raw.self]
    )
}

@main
enum Main {
    static func main() {
        let arguments = Array(CommandLine.arguments.dropFirst())
        let names = SignupCtl.configuration.subcommands.map { $0._commandName }
        let json = arguments.prefix { $0 != "--" }.contains("--json")
        Report.json = json
        if arguments == ["--generate-completion-script", "bash"] || arguments == ["--generate-completion-script=bash"] {
            print(BashCompletion.script(SignupCtl.completionScript(for: .bash)), terminator: "")
            return
        }
        switch ArgumentNormalizer.normalize(arguments, subcommands: names) {
        case .usage(let message):
            Report.fail(CommandFailure(.usage, message, code: message.hasPrefix("unknown command") || message.hasPrefix(ArgumentNormalizer.unknownCommandChinese) ? "unknown_command" : "usage"))
        case .arguments(let normalized):
            if json { emitInformationEnvelope(normalized, names: names) }
            var command: ParsableCommand
            do {
                command = try SignupCtl.parseAsRoot(normalized)
            } catch {
                let status = SignupCtl.exitCode(for: error)
                if status != .success, json {
                    JSONEnvelope.emitFailure(
                        CommandFailure(.usage, SignupCtl.message(for: error), code: "usage"),
                        command: normalized.first { names.contains($0) } ?? "signupctl")
                    // The envelope says it all: not the usage text on standard error too (helper-48).
                    exit(status.rawValue)
                }
                // Usage errors exit 64 here (argument-parser's EX_USAGE); --help and --version 0.
                SignupCtl.exit(withError: error)
            }
            Report.command = type(of: command)._commandName
            do {
                try command.run()
            } catch let failure as CommandFailure {
                Report.fail(failure)
            } catch {
                SignupCtl.exit(withError: error)
            }
        }
    }

    /// `--version` and `help` print text; under --json they print one envelope instead:
    /// {"ok":true,"command":"version","version":V} and {"ok":true,"command":"help","help":TEXT}.
    private static func emitInformationEnvelope(_ arguments: [String], names: [String]) {
        let options = arguments.prefix { $0 != "--" }
        if options.first == "--version" || options.first == "-V" {
            var envelope = JSONEnvelope(command: "version")
            envelope.member("version", SignupCtl.configuration.version)
            envelope.emit()
            exit(0)
        }
        guard options.first == "help" else { return }
        let topic = options.dropFirst().first { !$0.hasPrefix("-") }
        let subcommand = SignupCtl.configuration.subcommands.first { $0._commandName == topic } ?? SignupCtl.self
        var envelope = JSONEnvelope(command: "help")
        envelope.member("help", SignupCtl.helpMessage(for: subcommand))
        envelope.emit()
        exit(0)
    }
}
