import Foundation
import Testing
@testable import SignupDaemonCore

// Issue 29 (the cold start): signupd's command line, parsed from its option declarations
// without swift-argument-parser's reflection. The help, errors and man page are meant to
// read as they did; scripts/manpage.py reads --experimental-dump-help.

/// The parse of `arguments`, as the command it runs (or a failure naming why).
private func command(_ arguments: [String]) throws -> SignupDaemonCommand {
    guard case .run(let command) = try SignupDaemonCommand.parse(arguments) else {
        Issue.record("\(arguments) did not ask to run")
        throw UsageError("not a run")
    }
    return command
}

/// The message of the usage error `arguments` gives.
private func refusal(_ arguments: [String]) -> String? {
    do {
        let parsed = try command(arguments)
        try parsed.validate()
        return nil
    } catch let error as UsageError {
        return error.description
    } catch {
        return "\(error)"
    }
}

@Suite("signupd's command line")
struct CommandLineParseTests {
    @Test("values in both spellings, flags, repeating options and an older name reach their fields")
    func values() throws {
        let parsed = try command([
            "--socket", "/run/x.sock", "--socket-mode=0600", "--threads", "3", "--availability-timeout", "2.5",
            "--trusted-bridge-uid", "www-data", "--trusted-bridge-uid=1001", "--max-total-output-bytes", "1048576",
            "--check-config", "--argon2-ops", "4", "--database", ":memory:", "--log-level", "debug",
        ])
        #expect(parsed.paths.socket == "/run/x.sock")
        #expect(parsed.paths.socketMode == "0600")
        #expect(parsed.threads == 3)
        #expect(parsed.availability.availabilityTimeout == 2.5)
        #expect(parsed.frontEnds.trustedBridgeUid == ["www-data", "1001"])
        #expect(parsed.limits.maxBufferedBytes == 1_048_576)
        #expect(parsed.forms.checkConfig)
        #expect(parsed.security.argon2Ops == 4)
        #expect(parsed.paths.database == ":memory:")
        #expect(parsed.logLevel == "debug")
    }

    @Test("nothing given: every field at its default")
    func defaults() throws {
        let parsed = try command([])
        #expect(parsed.paths.socket == nil)
        #expect(parsed.paths.socketMode == "0660")
        #expect(parsed.pinEventLoops == "auto")
        #expect(parsed.logLevel == "info")
        #expect(parsed.forms.checkConfig == false)
        #expect(parsed.frontEnds.trustedBridgeUid.isEmpty)
        #expect(parsed.threads == nil)
    }

    @Test("an option given twice keeps the last value")
    func lastWins() throws {
        #expect(try command(["--threads=3", "--threads", "4"]).threads == 4)
    }

    @Test("a value that starts with a dash is read when it is a number, so the range check can name it")
    func negative() {
        #expect(refusal(["--threads", "-3"]) == "--threads must be between 1 and 256, not -3")
        #expect(refusal(["--threads", "--log-level", "info"]) == "Missing value for '--threads <n>'")
    }

    @Test("usage errors say what is wrong, as swift-argument-parser said it", arguments: [
        (["--bogus"], "Unknown option '--bogus'"),
        (["--bogus=1"], "Unknown option '--bogus'"),
        (["-t"], "Unknown option '-t'"),
        (["--max-conections", "5"], "Unknown option '--max-conections'; did you mean '--max-connections'?"),
        (["--verison"], "Unknown option '--verison'; did you mean '--version'?"),
        (["--Max-Connections", "5"], "Unknown option '--Max-Connections'; did you mean '--max-connections'?"),
        (["--h"], "Unknown option '--h'"),
        (["--version=1"], "The option '--version' does not take any value, but '1' was specified."),
        (["--check-config-of", "1"], "--check-config-of is for --check-config: it names the signupd whose forms to check"),
        (["--check-config", "--check-config-of", "-1"], "--check-config-of must be between 1 and 2147483647, not -1"),
        (["--idle-exi", "5"], "Unknown option '--idle-exi'; did you mean '--idle-exit'?"),
        (["--metrics-l", "x"], "Unknown option '--metrics-l'; did you mean '--metrics-listen'?"),
        (["--trusted-bridge", "x"], "Unknown option '--trusted-bridge'"),
        (["--threads", String(repeating: "9x", count: 50)], "The value '\(String(repeating: "9x", count: 32))…' is invalid for '--threads <n>'"),
        (["extra"], "Unexpected argument 'extra'"),
        (["-"], "Unexpected argument '-'"),
        (["--", "--threads"], "Unexpected argument '--threads'"),
        (["--threads"], "Missing value for '--threads <n>'"),
        (["--threads="], "Missing value for '--threads <n>'"),
        (["--threads", "x"], "The value 'x' is invalid for '--threads <n>'"),
        (["--idle-exit", "1.5"], "The value '1.5' is invalid for '--idle-exit <seconds>'"),
        (["--availability-timeout", "inf"], "The value 'inf' is invalid for '--availability-timeout <seconds>'"),
        (["--availability-timeout", "61"], "--availability-timeout must be more than 0 and at most 60 seconds, not 61.0"),
        (["--argon2-ops", "-1"], "The value '-1' is invalid for '--argon2-ops <n>'"),
        (["--check-config=yes"], "The option '--check-config' does not take any value, but 'yes' was specified."),
        (["--threads", "0"], "--threads must be between 1 and 256, not 0"),
        (["--log-level", "loud"], "unknown --log-level \"loud\"; one of: trace, debug, info, notice, warning, error, critical"),
        (["--socket-mode", "999"], "--socket-mode must be an octal mode such as 0660"),
        (["--max-total-output-bytes", "1"], "--max-buffered-bytes must be between 65536 and 68719476736, not 1"),
        (["--socket", "/" + String(repeating: "s", count: 119)], "--socket: the path is 120 bytes; a Unix socket's path holds at most 107"),
        (["--metrics-socket", "/" + String(repeating: "m", count: 107)], "--metrics-socket: the path is 108 bytes; a Unix socket's path holds at most 107"),
        (["--database-pool-size", "3"], "--database-pool-size is for a PostgreSQL store (--database postgresql://…); this daemon uses an SQLite store"),
    ])
    func refusals(_ arguments: [String], _ message: String) {
        #expect(refusal(arguments) == message)
    }

    @Test("an error in a value carries the option's help line")
    func optionHelp() {
        #expect(throws: UsageError.self) { try SignupDaemonCommand.parse(["--threads", "x"]) }
        do {
            _ = try SignupDaemonCommand.parse(["--threads", "x"])
        } catch {
            #expect(error.optionHelp == "--threads <n>  Event loop threads (default: the number of CPUs signupd may run on).")
        }
    }

    @Test("--help, -h, --version and --experimental-dump-help win over anything else given")
    func requests() throws {
        for (arguments, expected) in [(["--bogus", "--help"], "help"), (["-h"], "help"), (["--threads", "0", "--version"], "version"), (["x", "--experimental-dump-help"], "dump"), (["--generate-completion-script=zsh", "--bogus"], "completion")] {
            let request: String
            switch try SignupDaemonCommand.parse(arguments) {
            case .help: request = "help"
            case .version: request = "version"
            case .dumpHelp: request = "dump"
            case .completionScript: request = "completion"
            case .run: request = "run"
            }
            #expect(request == expected, "\(arguments)")
        }
        // After `--`, it is an argument like any other.
        #expect(refusal(["--", "--help"]) == "Unexpected argument '--help'")
    }
}

@Suite("signupd --help and --experimental-dump-help")
struct CommandLineHelpTests {
    @Test("no two options share a name: the parser would reach only the first")
    func uniqueNames() {
        let names = SignupDaemonCommand.options.flatMap(\.names) + ["help", "h", "version", "experimental-dump-help", "help-hidden"]
        #expect(Set(names).count == names.count, "\(Dictionary(grouping: names, by: { $0 }).filter { $0.value.count > 1 }.keys)")
    }

    @Test("every option is in --help once, in its section, and no line is wider than 80 columns")
    func help() {
        let help = SignupDaemonCommand.helpText
        let lines = help.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.allSatisfy { $0.count <= 80 })
        for option in SignupDaemonCommand.options {
            // The label, then its help or the end of the line (--check-config is a prefix of --check-config-of).
            let starts = lines.filter { $0 == "  " + option.label || $0.hasPrefix("  " + option.label + " ") }
            #expect(starts.count == 1, "\(option.label)")
        }
        let sections = lines.filter { $0.hasSuffix(":") && !$0.hasPrefix(" ") }
        #expect(sections == [
            "SOCKET AND STORE:", "POSTGRESQL STORE:", "AVAILABILITY CHECK:", "LIMITS:", "PASSWORDS AND TOKENS:",
            "FRONT ENDS AND RESUMING:", "FORMS AND MESSAGES:", "METRICS AND ADMINISTRATION:", "OPTIONS:",
        ])
        // A field's default is read from the field itself.
        #expect(help.contains("octal. (default: 0660)"))
        #expect(help.contains("  -h, --help              Show help information.\n"))
    }

    @Test("help is wrapped as swift-argument-parser wrapped it")
    func wrap() {
        let wrap = SignupDaemonCommand.wrap
        #expect(wrap("aaa bbb ccc", 8) == ["aaa bbb", "ccc"])
        // The last line may fill the width; the others leave a column, for the space.
        #expect(wrap("aaa bbbb", 8) == ["aaa bbbb"])
        #expect(wrap("aaa bbbb c", 8) == ["aaa", "bbbb c"])
        #expect(wrap("averyverylongword b", 8) == ["averyverylongword", "b"])
        #expect(wrap("a\nb c", 8) == ["a", "b c"])
    }

    @Test("the dump lists every option once, with its names, value and default, as scripts/manpage.py reads it")
    func dump() throws {
        let json = try JSONSerialization.jsonObject(with: Data(SignupDaemonCommand.dumpHelpJSON.utf8)) as? [String: Any]
        let command = try #require(json?["command"] as? [String: Any])
        #expect(command["commandName"] as? String == "signupd")
        let arguments = try #require(command["arguments"] as? [[String: Any]])
        #expect(arguments.count == SignupDaemonCommand.options.count + 2)
        let byName = Dictionary(uniqueKeysWithValues: arguments.map { (($0["preferredName"] as? [String: Any])?["name"] as? String ?? "", $0) })
        let mode = try #require(byName["socket-mode"])
        #expect(mode["kind"] as? String == "option")
        #expect(mode["valueName"] as? String == "mode")
        #expect(mode["defaultValue"] as? String == "0660")
        #expect(mode["sectionTitle"] as? String == "Socket and store")
        let buffered = try #require(byName["max-buffered-bytes"])
        #expect((buffered["names"] as? [[String: Any]])?.compactMap { $0["name"] as? String } == ["max-buffered-bytes", "max-total-output-bytes"])
        #expect(byName["trusted-bridge-uid"]?["isRepeating"] as? Bool == true)
        #expect(byName["check-config"]?["kind"] as? String == "flag")
        let help = try #require(byName["help"])
        #expect((help["names"] as? [[String: Any]])?.first?["kind"] as? String == "short")
    }
}

@Suite("signupd --generate-completion-script")
struct CommandLineCompletionTests {
    @Test("each shell's script names every option, and offers what a value can be")
    func scripts() throws {
        for shell in CompletionShell.allCases {
            guard case .completionScript(let asked) = try SignupDaemonCommand.parse(["--generate-completion-script", shell.rawValue]) else {
                Issue.record("no script for \(shell)")
                continue
            }
            let script = SignupDaemonCommand.completionScript(for: asked)
            for option in SignupDaemonCommand.options {
                #expect(script.contains(shell == .fish ? "-l \(option.names[0]) " : "--\(option.names[0])"), "\(shell): \(option.names[0])")
            }
            #expect(script.contains("trace debug info notice warning error critical"), "\(shell): log levels")
            #expect(script.contains("auto no"), "\(shell): --pin-event-loops")
        }
        let bash = SignupDaemonCommand.completionScript(for: .bash)
        // One value a line, so that a name with spaces stays one (helper-42).
        #expect(bash.contains("    --forms-dir) mapfile -t COMPREPLY < <(compgen -d -- \"$cur\") ;;"))
        #expect(bash.contains("    --trusted-bridge-uid) mapfile -t COMPREPLY < <(compgen -u -- \"$cur\") ;;"))
        #expect(bash.contains("    --threads) : ;;"))
        #expect(!bash.contains("COMPREPLY=($("))
        // zsh: a value after "=" too, and a repeating option offered again.
        let zsh = SignupDaemonCommand.completionScript(for: .zsh)
        #expect(zsh.contains("    '--socket=[Socket to bind when not socket-activated]:file:_files' \\\n"))
        #expect(zsh.contains("    '*--trusted-bridge-uid=["))
        #expect(zsh.contains("    '--check-config[Read the forms"))
    }

    @Test("zsh's and fish's descriptions are quoted: an apostrophe or a colon in help ends nothing")
    func quoting() {
        let zsh = SignupDaemonCommand.completionScript(for: .zsh)
        #expect(zsh.contains("service'\\''s certificate"))
        #expect(zsh.contains("--availability-ca-file=[With an https\\://"))
        let fish = SignupDaemonCommand.completionScript(for: .fish)
        #expect(fish.contains("service\\'s certificate"))
    }

    @Test("a shell it does not write for is a usage error")
    func unknownShell() {
        #expect(throws: UsageError.self) { try SignupDaemonCommand.parse(["--generate-completion-script", "tcsh"]) }
        #expect(throws: UsageError.self) { try SignupDaemonCommand.parse(["--generate-completion-script"]) }
    }
}

@Suite("per-user defaults follow a smaller total")
struct PerUserDefaultsTests {
    @Test("--max-connections or --max-queued-hashes alone starts: the per-user default follows it down (helper-42)")
    func follows() throws {
        let parsed = try command(["--max-connections", "100", "--max-queued-hashes", "10"])
        try parsed.validate()
        var tuning = DaemonTuning()
        parsed.limits.apply(to: &tuning)
        parsed.security.apply(to: &tuning)
        #expect(tuning.maxConnectionsPerUID == 6)
        #expect(tuning.maxQueuedHashesPerUID == 2)
        // A larger total leaves the default as it is; a per-user value given must still fit.
        let larger = try command(["--max-connections", "100000"])
        var untouched = DaemonTuning()
        larger.limits.apply(to: &untouched)
        #expect(untouched.maxConnectionsPerUID == DaemonTuning.standard.maxConnectionsPerUID)
        #expect(refusal(["--max-connections", "100", "--max-connections-per-user", "200"])
            == "--max-connections-per-user 200 is more than --max-connections 100; a per-uid limit cannot exceed the total")
    }
}
