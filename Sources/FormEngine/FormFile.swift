import SignupProtocol

/// Reads a form definition from its file format, the one operators write in
/// `/etc/signupd/forms.d/*.form` and the built-in forms are written in:
///
///     [form]
///     name = phone-login
///     title = Log in with your phone
///     title.zh-CN = 手机号登录
///     action = login            ; or signup
///     identity = phone          ; the field an account is known by
///     secret = password         ; the password field
///     submit = Log in
///
///     [field phone]
///     kind = phone              ; text, secret, username, phone, email
///     label = Phone number
///     rule = phone 11 15 as phone.too_short
///
/// Every problem is reported as `file:line:column: message` (`ConfigError`).
public enum FormFile {
    /// The most fields one form may have.
    public static let maxFields = 32

    /// The placeholders each catalogue's text of a message id uses, by locale.
    public typealias PlaceholderUses = (String) -> [(locale: String, names: Set<String>)]

    /// Parses and checks one form. `knowsMessage` says whether a message id named by
    /// `ok =` or `as` exists (in the English catalogue); `placeholderUses` what the texts of
    /// an `as` id use, which its rule must send.
    public static func parse(
        _ text: String, file: String, knowsMessage: @escaping (String) -> Bool = { _ in true }, placeholderUses: @escaping PlaceholderUses = { _ in [] }
    ) throws(ConfigError) -> FormDefinition {
        let (form, problems, _) = parseRecording(text, file: file, knowsMessage: knowsMessage, placeholderUses: placeholderUses)
        if let first = problems.first { throw first }
        return form!
    }

    /// Parses and checks one form, reporting every problem in file order (like a compiler).
    public static func parseAll(
        _ text: String, file: String, knowsMessage: @escaping (String) -> Bool = { _ in true }, placeholderUses: @escaping PlaceholderUses = { _ in [] }
    ) -> Result<FormDefinition, ConfigErrors> {
        parseAllWithWarnings(text, file: file, knowsMessage: knowsMessage, placeholderUses: placeholderUses).result
    }

    /// `parseAll`, and the warnings of a form that loads (`warning:` lines, in file order).
    public static func parseAllWithWarnings(
        _ text: String, file: String, knowsMessage: @escaping (String) -> Bool = { _ in true }, placeholderUses: @escaping PlaceholderUses = { _ in [] }
    ) -> (result: Result<FormDefinition, ConfigErrors>, warnings: [ConfigError]) {
        let (form, problems, warnings) = parseRecording(text, file: file, knowsMessage: knowsMessage, placeholderUses: placeholderUses)
        if let form, problems.isEmpty { return (.success(form), warnings) }
        return (.failure(ConfigErrors(errors: ConfigErrors.inFileOrder(problems))), [])
    }

    /// The form, and the problems in the order they were found (the first is the cause).
    private static func parseRecording(
        _ text: String, file: String, knowsMessage: @escaping (String) -> Bool, placeholderUses: @escaping PlaceholderUses
    ) -> (FormDefinition?, [ConfigError], [ConfigError]) {
        var parser = Parser(file: file, knowsMessage: knowsMessage, placeholderUses: placeholderUses)
        let (lines, lineProblems) = ConfigLines.parseAll(text, file: file)
        parser.problems = lineProblems
        for line in lines {
            do { try parser.take(line) } catch {
                parser.problems.append(error)
                // The keys under a broken section header are not checked against another.
                if case .section = line.content { parser.section = .broken }
            }
        }
        let form = parser.finish()
        return (parser.problems.isEmpty ? form : nil, parser.problems, parser.warnings)
    }

    /// Rule names as written in files.
    public static let ruleNames = ["min-length", "max-length", "max-bytes", "characters", "username", "phone", "email", "equals", "not-containing", "password-quality", "available"]
}
