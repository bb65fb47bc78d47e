/// A problem in a configuration file, with where it is: `file:line:column: message`.
public struct ConfigError: Error, Sendable, Equatable, CustomStringConvertible {
    public var file: String
    /// 1-based.
    public var line: Int
    /// 1-based, in Unicode scalars.
    public var column: Int
    public var message: String

    public init(file: String, line: Int, column: Int, message: String) {
        self.file = file
        self.line = line
        self.column = column
        self.message = message
    }

    /// `file:line:column: message`, or `file: message` for a problem with the file as a whole
    /// (line 0: it cannot be read, its mode is unsafe).
    public var description: String { line > 0 ? "\(file):\(line):\(column): \(message)" : "\(file): \(message)" }
}

/// One meaningful line of a form or message file: `[section]` or `key = value`.
struct ConfigLine: Sendable {
    enum Content: Sendable {
        /// `[field username]`: the words inside the brackets.
        case section([String])
        case assignment(key: String, value: String)
    }

    var content: Content
    var line: Int
    /// Columns (1-based) of the key and the value, or of the section's words.
    var keyColumn: Int
    var valueColumn: Int
}

/// The line syntax shared by `.form` and `.messages` files (the systemd unit-file style):
/// `#` or `;` starts a comment line, `[...]` a section, `key = value` an assignment.
/// Blank lines are ignored; surrounding blanks are trimmed.
enum ConfigLines {
    /// Lines end with LF or CR LF; a UTF-8 byte-order mark at the start is skipped.
    /// `sections` says whether `[...]` lines are allowed (the hint of a bad line names them).
    static func parse(_ text: String, file: String, sections: Bool = true) throws(ConfigError) -> [ConfigLine] {
        let (lines, problems) = parseAll(text, file: file, sections: sections)
        if let first = problems.first { throw first }
        return lines
    }

    /// The good lines and a problem for each bad one.
    static func parseAll(_ text: String, file: String, sections: Bool = true) -> ([ConfigLine], [ConfigError]) {
        guard text.utf8.count <= 1 << 20 else { return ([], [ConfigError(file: file, line: 1, column: 1, message: "file larger than 1 MiB")]) }
        var result: [ConfigLine] = []
        var problems: [ConfigError] = []
        var lineNumber = 0
        var body = text.unicodeScalars[...]
        if body.first == "\u{FEFF}" { body = body.dropFirst() }
        // By scalars, not Characters: "\r\n" is one Character and would hide the line end.
        for raw in body.split(separator: "\n", omittingEmptySubsequences: false) {
            lineNumber += 1
            var scalars = Array(raw)
            if scalars.last == "\r" { scalars.removeLast() }
            do {
                if let line = try parseLine(scalars, number: lineNumber, file: file, sections: sections) { result.append(line) }
            } catch { problems.append(error) }
        }
        return (result, problems)
    }

    /// The scalars as a String, encoded in one buffer: `String.UnicodeScalarView(_:)` appended
    /// them one by one through a generic path, half of reading the built-in forms at every
    /// start (issue 29).
    private static func text(_ scalars: ArraySlice<Unicode.Scalar>) -> String {
        String(unsafeUninitializedCapacity: scalars.count * 4) { buffer in
            var count = 0
            for scalar in scalars {
                UTF8.encode(scalar) { byte in
                    buffer[count] = byte
                    count += 1
                }
            }
            return count
        }
    }

    private static func parseLine(_ scalars: [Unicode.Scalar], number lineNumber: Int, file: String, sections: Bool) throws(ConfigError) -> ConfigLine? {
        do {
            guard let first = scalars.firstIndex(where: { $0 != " " && $0 != "\t" }) else { return nil }
            if scalars[first] == "#" || scalars[first] == ";" { return nil }
            let last = scalars.lastIndex(where: { $0 != " " && $0 != "\t" })!
            if let bad = scalars.firstIndex(where: { $0.value < 0x20 && $0 != "\t" }) {
                throw ConfigError(file: file, line: lineNumber, column: bad + 1, message: "control character U+\(String(scalars[bad].value, radix: 16, uppercase: true)) in a line")
            }
            if scalars[first] == "[" {
                guard scalars[last] == "]", last > first else {
                    throw ConfigError(file: file, line: lineNumber, column: last + 1, message: "a section header must end with \"]\"")
                }
                let inner = text(scalars[(first + 1)..<last])
                let words = inner.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
                guard !words.isEmpty else { throw ConfigError(file: file, line: lineNumber, column: first + 2, message: "empty section header") }
                return ConfigLine(content: .section(words), line: lineNumber, keyColumn: first + 1, valueColumn: first + 2)
            }
            guard let equals = scalars[first...last].firstIndex(of: "=") else {
                throw ConfigError(file: file, line: lineNumber, column: first + 1, message: sections ? "expected \"key = value\" or \"[section]\"" : "expected \"message.id = text\"")
            }
            let keyEnd = scalars[first..<equals].lastIndex(where: { $0 != " " && $0 != "\t" }).map { $0 + 1 } ?? first
            guard keyEnd > first else { throw ConfigError(file: file, line: lineNumber, column: first + 1, message: "missing key before \"=\"") }
            let key = text(scalars[first..<keyEnd])
            let valueStart = scalars[(equals + 1)...].firstIndex(where: { $0 != " " && $0 != "\t" }) ?? (last + 1)
            let value = valueStart <= last ? text(scalars[valueStart...last]) : ""
            return ConfigLine(content: .assignment(key: key, value: value), line: lineNumber, keyColumn: first + 1, valueColumn: valueStart + 1)
        }
    }
}

extension ConfigLine {
    func error(_ file: String, _ message: String, atValue: Bool = true, offset: Int = 0) -> ConfigError {
        ConfigError(file: file, line: line, column: (atValue ? valueColumn : keyColumn) + offset, message: message)
    }

    /// Where the first whole `word` of the value starts, in scalars from the value's start
    /// (0 when it has none): an error about one argument points at it.
    func valueOffset(ofWord word: String) -> Int {
        guard case .assignment(_, let value) = content else { return 0 }
        var offset = 0
        for part in value.unicodeScalars.split(omittingEmptySubsequences: false, whereSeparator: { $0 == " " || $0 == "\t" }) {
            if String(String.UnicodeScalarView(part)) == word { return offset }
            offset += part.count + 1
        }
        return 0
    }
}
