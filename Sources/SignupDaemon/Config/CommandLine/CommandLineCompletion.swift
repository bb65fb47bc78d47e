/// What a shell offers for an option's value.
enum CommandLineCompletion: Equatable {
    case nothing
    case files
    case directories
    case groups
    case users
    case words([String])

    /// The usual offer for a value called `valueName`: a path is a file, a dir a directory,
    /// `a|b` one of those words.
    init(valueName: String) {
        switch valueName {
        case "path": self = .files
        case "dir": self = .directories
        case "group": self = .groups
        case "user": self = .users
        default: self = valueName.contains("|") ? .words(valueName.split(separator: "|").map(String.init)) : .nothing
        }
    }
}

/// The shells `--generate-completion-script` writes for: the ones the Debian package
/// installs completions of.
enum CompletionShell: String, CaseIterable {
    case bash, zsh, fish
}

/// `signupd --generate-completion-script SHELL`: option names, and values where the shell
/// can offer them (files, directories, groups, users, a value's words), from the options'
/// declarations; the package installs them (debian/rules).
extension CommandLineCommand {
    static func completionScript(for shell: CompletionShell) -> String {
        switch shell {
        case .bash: bashCompletion
        case .zsh: zshCompletion
        case .fish: fishCompletion
        }
    }

    /// Each option's names with dashes, what its value completes to (nil for a flag), and
    /// its help's first sentence.
    private static var completable: [(names: [String], value: CommandLineCompletion?, summary: String, isRepeating: Bool)] {
        (options + builtIn).map { option in
            let value: CommandLineCompletion?
            if case .option(let valueName) = option.kind { value = option.completion ?? CommandLineCompletion(valueName: valueName) } else { value = nil }
            return (option.names.map { $0.count == 1 ? "-" + $0 : "--" + $0 }, value, firstSentence(option.help), option.isRepeating)
        }
    }

    /// Values one to a line (`mapfile`), so that a file name with spaces stays one; a value
    /// after `=` (`--log-level=w`: bash makes `=` a word of its own) completes as after a
    /// space, and a flag's offers nothing; where `=` does not split words, the replies keep
    /// their `--name=`.
    private static var bashCompletion: String {
        var lines = [
            "# bash completion for \(commandName); written by \(commandName) --generate-completion-script bash",
            "_\(commandName)() {",
            "    local cur=\"${COMP_WORDS[COMP_CWORD]}\" prev=\"${COMP_WORDS[COMP_CWORD-1]}\" prefix=\"\" value=\"\"",
            "    if [[ \"$cur\" == = ]]; then cur=\"\"; value=1",
            "    elif [[ \"$prev\" == = ]]; then prev=\"${COMP_WORDS[COMP_CWORD-2]}\"; value=1",
            "    elif [[ \"$cur\" == --*=* ]]; then prev=\"${cur%%=*}\"; prefix=\"$prev=\"; cur=\"${cur#*=}\"; value=1",
            "    fi",
            "    COMPREPLY=()",
            "    case \"$prev\" in",
        ]
        for option in completable {
            guard let value = option.value else { continue }
            let offer: String
            switch value {
            case .nothing: offer = ":"
            case .files: offer = "mapfile -t COMPREPLY < <(compgen -f -- \"$cur\")"
            case .directories: offer = "mapfile -t COMPREPLY < <(compgen -d -- \"$cur\")"
            case .groups: offer = "mapfile -t COMPREPLY < <(compgen -g -- \"$cur\")"
            case .users: offer = "mapfile -t COMPREPLY < <(compgen -u -- \"$cur\")"
            case .words(let words): offer = "mapfile -t COMPREPLY < <(compgen -W '\(words.joined(separator: " "))' -- \"$cur\")"
            }
            lines.append("    \(option.names.joined(separator: "|"))) \(offer) ;;")
        }
        lines += [
            "    *) [[ -n \"$value\" ]] || mapfile -t COMPREPLY < <(compgen -W '\(completable.flatMap(\.names).joined(separator: " "))' -- \"$cur\") ;;",
            "    esac",
            "    [[ -z \"$prefix\" ]] || COMPREPLY=(\"${COMPREPLY[@]/#/$prefix}\")",
            "    return 0",
            "}",
            "complete -o filenames -F _\(commandName) \(commandName)",
        ]
        return lines.joined(separator: "\n") + "\n"
    }

    private static var zshCompletion: String {
        var lines = ["#compdef \(commandName)", "# written by \(commandName) --generate-completion-script zsh", "_arguments -s \\"]
        for option in completable {
            // zsh's spec: '(exclusions)'{--a,--b}'[help]:value:action', brackets and colons escaped.
            let summary = escaped(escaped(option.summary, "\\[]:", with: "\\"), "'", with: "'\\'")
            var action = ""
            if let value = option.value {
                switch value {
                case .nothing: action = ":value: "
                case .files: action = ":file:_files"
                case .directories: action = ":directory:_files -/"
                case .groups: action = ":group:_groups"
                case .users: action = ":user:_users"
                case .words(let words): action = ":value:(\(words.joined(separator: " ")))"
                }
            }
            // `--name=`: the value after "=" or in the next word; `*`: may be given again.
            let spelled = option.names.map { option.value == nil ? $0 : $0 + "=" }
            let again = option.isRepeating ? "*" : ""
            if spelled.count == 1 {
                lines.append("    '\(again)\(spelled[0])[\(summary)]\(action)' \\")
            } else {
                lines.append("    '(\(option.names.joined(separator: " ")))'{\(spelled.joined(separator: ","))}'[\(summary)]\(action)' \\")
            }
        }
        lines[lines.count - 1].removeLast(2)
        return lines.joined(separator: "\n") + "\n"
    }

    private static var fishCompletion: String {
        var lines = ["# fish completion for \(commandName); written by \(commandName) --generate-completion-script fish", "complete -c \(commandName) -f"]
        for option in completable {
            var line = "complete -c \(commandName)"
            for name in option.names { line += name.hasPrefix("--") ? " -l \(name.dropFirst(2))" : " -s \(name.dropFirst())" }
            if let value = option.value {
                switch value {
                case .nothing: line += " -x"
                case .files: line += " -r -F"
                case .directories: line += " -x -a '(__fish_complete_directories)'"
                case .groups: line += " -x -a '(__fish_complete_groups)'"
                case .users: line += " -x -a '(__fish_complete_users)'"
                case .words(let words): line += " -x -a '\(words.joined(separator: " "))'"
                }
            }
            line += " -d '\(escaped(option.summary, "\\'", with: "\\"))'"
            lines.append(line)
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// `text` with each of `special` preceded by `escape`.
    private static func escaped(_ text: String, _ special: String, with escape: String) -> String {
        var out = ""
        for character in text {
            if special.contains(character) { out += escape }
            out.append(character)
        }
        return out
    }

    /// Help's first sentence, for a shell's one-line description: up to a full stop that
    /// a capital letter follows ("e.g. http://…" goes on).
    private static func firstSentence(_ help: String) -> String {
        var rest = help[...]
        while let stop = rest.firstIndex(of: ".") {
            let after = rest[rest.index(after: stop)...]
            if after.hasPrefix(" "), after.dropFirst().first?.isUppercase == true { return String(help[..<stop]) }
            rest = after
        }
        return help
    }
}
