import SignupProtocol

/// Reads a message catalogue: `<locale>.messages`, lines of `message.id = text`, where
/// `{name}` stands for a parameter. The locale is the file's name.
public enum MessageFile {
    public static func parse(_ text: String, locale: String, file: String) throws(ConfigError) -> MessageCatalogue {
        switch parseAll(text, locale: locale, file: file) {
        case .success(let catalogue): return catalogue
        case .failure(let errors): throw errors.errors[0]
        }
    }

    /// Every problem of the file, in file order.
    public static func parseAll(_ text: String, locale: String, file: String) -> Result<MessageCatalogue, ConfigErrors> {
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
                    if let (offset, problem) = MessagePlaceholders.problem(in: value, allowed: MessagePlaceholders.parameters(of: key)) {
                        throw line.error(file, "\"\(key)\": \(problem)", offset: offset)
                    }
                    texts[key] = (value, line.line)
                }
            } catch { problems.append(error) }
        }
        guard problems.isEmpty else { return .failure(ConfigErrors(errors: ConfigErrors.inFileOrder(problems))) }
        return .success(MessageCatalogue(locale: locale.replacing("_", with: "-"), texts: texts.mapValues(\.0)))
    }
}
