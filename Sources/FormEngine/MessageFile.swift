import SignupProtocol

/// Reads a message catalogue: `<locale>.messages`, lines of `message.id = text`, where
/// `{name}` stands for a parameter. The locale is the file's name.
public enum MessageFile {
    public static func parse(_ text: String, locale: String, file: String, checkingPlaceholders: Bool = true) throws(ConfigError) -> MessageCatalogue {
        switch parseAll(text, locale: locale, file: file, checkingPlaceholders: checkingPlaceholders) {
        case .success(let catalogue): return catalogue
        case .failure(let errors): throw errors.errors[0]
        }
    }

    /// Every problem of the file, in file order. `checkingPlaceholders: false` is for the
    /// built-in catalogues alone, whose placeholders a test checks (`FormFileTests`): the
    /// check was about a quarter of reading the forms at every start (issue 29).
    public static func parseAll(_ text: String, locale: String, file: String, checkingPlaceholders: Bool = true) -> Result<MessageCatalogue, ConfigErrors> {
        guard LocaleTag.isWellFormed(locale) else {
            return .failure(ConfigErrors(errors: [ConfigError(file: file, line: 1, column: 1, message: "the file name must be a BCP 47 tag, e.g. zh-CN.messages, not \"\(locale)\"")]))
        }
        var texts: [String: (String, Int)] = [:]
        let (lines, lineProblems) = ConfigLines.parseAll(text, file: file, sections: false)
        var problems = lineProblems
        for line in lines {
            do throws(ConfigError) {
                switch line.content {
                case .section: throw line.error(file, "a message file has no sections: write \"message.id = text\"")
                case .assignment(let key, let value):
                    guard FormFile.isMessageIDForCatalogue(key) else { throw line.error(file, "message id \"\(key)\" must be dot-separated lower-case words", atValue: false) }
                    if let previous = texts[key] { throw line.error(file, "\"\(key)\" set twice (first on line \(previous.1))", atValue: false) }
                    guard !value.isEmpty else { throw line.error(file, "\"\(key)\" needs a text") }
                    // Every fault of its placeholders, each at its column.
                    let faults = checkingPlaceholders ? MessagePlaceholders.problems(in: value, allowed: MessagePlaceholders.parameters(of: key)) : []
                    guard faults.isEmpty else {
                        problems += faults.map { line.error(file, "\"\(key)\": \($0.message)", offset: $0.offset) }
                        continue
                    }
                    texts[key] = (value, line.line)
                }
            } catch { problems.append(error) }
        }
        guard problems.isEmpty else { return .failure(ConfigErrors(errors: ConfigErrors.inFileOrder(problems))) }
        return .success(MessageCatalogue(locale: locale.replacing("_", with: "-"), texts: texts.mapValues(\.0)))
    }

    /// The message ids a file gives a text to, whatever is wrong with its lines: a catalogue
    /// refused for one bad line still names its other ids, so forms that use them are not
    /// reported as naming unknown ones too (one bad line made errors in good files: helper-48).
    public static func ids(in text: String, file: String) -> Set<String> {
        Set(idLines(in: text, file: file).map(\.id))
    }

    /// The ids a file gives a text to, with the line and column of each.
    static func idLines(in text: String, file: String) -> [(id: String, line: Int, column: Int)] {
        ConfigLines.parseAll(text, file: file, sections: false).0.compactMap { line in
            guard case .assignment(let key, let value) = line.content, !value.isEmpty, FormFile.isMessageIDForCatalogue(key) else { return nil }
            return (key, line.line, line.keyColumn)
        }
    }
}
