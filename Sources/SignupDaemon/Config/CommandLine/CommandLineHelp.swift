import SignupProtocol

/// `--help`, the usage a usage error ends with, and `--experimental-dump-help`, all from a
/// command's option declarations. The layout is swift-argument-parser's, which signupd
/// used before (80 columns, options in their sections, help from column 26), so that the
/// help and the man page read as they did.
extension CommandLineCommand {
    static var usage: String { "Usage: \(commandName) <options>\n  See '\(commandName) --help' for more information." }

    /// What `--help` prints.
    static var helpText: String {
        var lines = wrap("OVERVIEW: " + abstract, width: columns)
        for paragraph in discussion.split(separator: "\n\n", omittingEmptySubsequences: true) {
            lines.append("")
            lines += wrap(String(paragraph), width: columns)
        }
        lines += ["", "USAGE: \(commandName) <options>"]
        let defaults = Self()
        var sections: [String] = []
        var bySection: [String: [CommandLineOption<Self>]] = [:]
        for option in options + builtIn {
            let title = option.section ?? "Options"
            if bySection[title] == nil { sections.append(title) }
            bySection[title, default: []].append(option)
        }
        // The general options last, as swift-argument-parser lists them.
        if let general = sections.firstIndex(of: "Options") { sections.append(sections.remove(at: general)) }
        for title in sections {
            lines += ["", title.uppercased() + ":"]
            for option in bySection[title] ?? [] {
                var help = option.help
                if let shown = option.shownDefault { help += " (default: \(shown(defaults)))" }
                let label = "  " + option.label
                let text = wrap(help, width: columns - helpColumn)
                if label.count < helpColumn {
                    lines.append(label + String(repeating: " ", count: helpColumn - label.count) + (text.first ?? ""))
                    lines += text.dropFirst().map { String(repeating: " ", count: helpColumn) + $0 }
                } else {
                    lines.append(label)
                    lines += text.map { String(repeating: " ", count: helpColumn) + $0 }
                }
            }
        }
        return lines.joined(separator: "\n") + "\n\n"
    }

    /// The options as swift-argument-parser's `--experimental-dump-help` described them
    /// (the members scripts/manpage.py reads), so that the man page is made as before.
    static var dumpHelpJSON: String {
        let defaults = Self()
        var json = JSONWriter(reservingCapacity: 16_384)
        json.beginObject()
        json.member("serializationVersion", 0)
        json.key("command")
        json.beginObject()
        json.member("commandName", commandName)
        json.member("abstract", abstract)
        json.member("discussion", discussion)
        json.member("shouldDisplay", true)
        json.beginArray("arguments")
        for option in options + builtIn {
            json.beginObject()
            json.member("kind", option.kind == .flag ? "flag" : "option")
            json.beginArray("names")
            for name in option.names {
                json.beginObject()
                json.member("kind", name.count == 1 ? "short" : "long")
                json.member("name", name)
                json.endObject()
            }
            json.endArray()
            json.key("preferredName")
            json.beginObject()
            let preferred = option.names.first { $0.count > 1 } ?? option.names[0]
            json.member("kind", preferred.count == 1 ? "short" : "long")
            json.member("name", preferred)
            json.endObject()
            if case .option(let valueName) = option.kind { json.member("valueName", valueName) }
            json.member("abstract", option.help)
            if let shown = option.shownDefault { json.member("defaultValue", shown(defaults)) }
            if let section = option.section { json.member("sectionTitle", section) }
            json.member("isOptional", true)
            json.member("isRepeating", option.isRepeating)
            json.member("shouldDisplay", true)
            json.endObject()
        }
        json.endArray()
        json.endObject()
        json.endObject()
        return String(decoding: json.bytes, as: UTF8.self) + "\n"
    }

    /// Where an option's help starts on its line.
    private static var helpColumn: Int { 26 }

    /// The terminal's width that help is laid out for.
    private static var columns: Int { 80 }

    /// `--version` and `--help`, listed (and described) like the command's own options;
    /// the parser answers them before reading anything else.
    static var builtIn: [CommandLineOption<Self>] {
        [
            CommandLineOption(names: ["version"], kind: .flag, help: "Show the version.", apply: { _, _ in true }),
            CommandLineOption(names: ["h", "help"], kind: .flag, help: "Show help information.", apply: { _, _ in true }),
        ]
    }

    /// `text` in lines for a column `width` characters wide, as swift-argument-parser
    /// breaks them: the rest of a paragraph that fits in `width` is its last line; otherwise
    /// the line breaks at the last space among the next `width` characters (so a line that
    /// is not a paragraph's last is at most `width - 1` long), or after a word longer than
    /// that. The text's own line breaks are kept.
    static func wrap(_ text: String, width: Int) -> [String] {
        var lines: [String] = []
        for paragraph in text.split(separator: "\n", omittingEmptySubsequences: false) {
            var rest = paragraph[...]
            while rest.count > width {
                let chunk = rest.prefix(width)
                if let space = chunk.lastIndex(of: " ") {
                    lines.append(String(rest[..<space]))
                    rest = rest[rest.index(after: space)...]
                } else if let space = rest.firstIndex(of: " ") {
                    lines.append(String(rest[..<space]))
                    rest = rest[rest.index(after: space)...]
                } else {
                    break
                }
            }
            lines.append(String(rest))
        }
        return lines
    }
}
