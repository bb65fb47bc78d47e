import CommandLineHints

/// A command whose options are `CommandLineOption`s: its name, its description and its
/// options, which the parser, `--help` and `--experimental-dump-help` read.
protocol CommandLineCommand {
    /// The command before any option is given: every field at its default.
    init()
    static var commandName: String { get }
    static var abstract: String { get }
    static var discussion: String { get }
    static var version: String { get }
    static var options: [CommandLineOption<Self>] { get }
}

/// What a command line asks for.
enum CommandLineRequest<Command> {
    case run(Command)
    case help
    case version
    /// The options described as JSON, for scripts/manpage.py.
    case dumpHelp
    /// `--generate-completion-script SHELL`: a completion script, for the package.
    case completionScript(CompletionShell)
}

/// A command line signupd cannot run with, or a check of its options that failed: exit
/// status 64 (EX_USAGE, as swift-argument-parser and sysexits.h), `Error: …` and the usage.
struct UsageError: Error, CustomStringConvertible {
    var description: String
    /// The option's own line of `--help`, shown when the fault is in its value.
    var optionHelp: String?

    init(_ description: String, optionHelp: String? = nil) {
        self.description = description
        self.optionHelp = optionHelp
    }

    static let exitStatus: Int32 = 64
}

extension CommandLineCommand {
    /// Reads `arguments` (without the program's name): `--name value`, `--name=value` and
    /// flags, in any order; an option given twice keeps its last value, a repeating one
    /// every value. `--help` (`-h`), `--version` and `--experimental-dump-help` win over
    /// everything else given.
    static func parse(_ arguments: [String]) throws(UsageError) -> CommandLineRequest<Self> {
        let named = arguments.prefix { $0 != "--" }
        if named.contains(where: { $0 == "--help" || $0 == "-h" || $0 == "--help-hidden" }) { return .help }
        if named.contains("--experimental-dump-help") { return .dumpHelp }
        if named.contains("--version") { return .version }
        if let at = named.firstIndex(where: { $0 == completionOption || $0.hasPrefix(completionOption + "=") }) {
            let shell = named[at] == completionOption ? (at + 1 < named.endIndex ? named[at + 1] : "") : String(named[at].dropFirst(completionOption.count + 1))
            guard let known = CompletionShell(rawValue: shell) else {
                throw UsageError("\(completionOption) takes one of: \(CompletionShell.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            return .completionScript(known)
        }

        // Found by a walk of the list, not a dictionary: a dictionary keyed by names was a
        // third of the parse at a cold start (its storage type made from its mangled name,
        // the Swift runtime scanning every conformance for Hashable), for some 60 options.
        let options = Self.options + builtIn
        var command = Self()
        var rest = arguments[...]
        while let argument = rest.popFirst() {
            if argument == "--" {
                if let first = rest.first { throw UsageError("Unexpected argument '\(shown(first))'") }
                break
            }
            guard argument.hasPrefix("-"), argument.count > 1 else { throw UsageError("Unexpected argument '\(shown(argument))'") }
            guard argument.hasPrefix("--") else { throw UsageError("Unknown option '\(shown(argument))'") }
            let spelled = argument.dropFirst(2)
            let name = spelled.prefix { $0 != "=" }
            let inline: Substring? = name.endIndex < spelled.endIndex ? spelled[spelled.index(after: name.endIndex)...] : nil
            // --help and --version are here only when given a value (`--version=1`).
            guard let option = options.first(where: { $0.names.contains { $0.count > 1 && $0.utf8.elementsEqual(name.utf8) } }) else {
                let longNames = options.flatMap(\.names).filter { $0.count > 1 }
                throw UsageError("Unknown option '--\(shown(name))'" + (Suggestion.closest(to: String(name), among: longNames).map { "; did you mean '--\($0)'?" } ?? ""))
            }
            switch option.kind {
            case .flag:
                if let inline { throw UsageError("The option '--\(name)' does not take any value, but '\(shown(inline))' was specified.") }
                _ = option.apply(&command, nil)
            case .option:
                let value: String
                if let inline {
                    value = String(inline)
                } else if let next = rest.first, !Self.looksLikeOption(next) {
                    value = next
                    rest.removeFirst()
                } else {
                    value = ""
                }
                guard !value.isEmpty else {
                    throw UsageError("Missing value for '\(option.label)'", optionHelp: Self.helpLine(option))
                }
                guard option.apply(&command, value) else {
                    throw UsageError("The value '\(shown(value))' is invalid for '\(option.label)'", optionHelp: Self.helpLine(option))
                }
            }
        }
        return .run(command)
    }

    /// What an error repeats of an argument: at most 64 characters of it (helper-42: a
    /// 5,000-character value was echoed whole).
    private static func shown<Text: StringProtocol>(_ text: Text) -> String {
        text.count <= 64 ? String(text) : String(text.prefix(64)) + "…"
    }

    /// Not listed by `--help`, as swift-argument-parser did not list it.
    private static var completionOption: String { "--generate-completion-script" }

    /// An argument that is an option, not the value of the one before it: `--x` or `-x`,
    /// but not `-` or a negative number (`--threads -3` reads -3, and says it is too few).
    private static func looksLikeOption(_ argument: String) -> Bool {
        argument.hasPrefix("-") && argument.count > 1 && Double(argument) == nil
    }

    /// `--threads <n>  Event loop threads …`: the line an error about an option's value adds.
    private static func helpLine(_ option: CommandLineOption<Self>) -> String {
        "\(option.label)  \(option.help)"
    }
}

/// Ends the command with this exit status, having said what there was to say.
struct ExitStatus: Error {
    var code: Int32

    init(_ code: Int32) {
        self.code = code
    }
}
