import BuiltinForms

/// The forms and message catalogues a daemon serves: the built-in ones, then an operator's
/// files on top (a form with the same name replaces the built-in one; a catalogue of the
/// same locale adds or replaces texts id by id).
public struct FormLibrary: Sendable {
    /// In the order `describe` lists them: built-in first, then the operator's by file name.
    public private(set) var forms: [FormDefinition]
    public let catalogues: MessageCatalogues

    /// Where each form came from (`file` as given to `load`).
    public private(set) var sources: [String: String]

    /// A file's text and the name used in error locations.
    public struct SourceFile: Sendable, Equatable {
        public var path: String
        public var text: String

        public init(path: String, text: String) {
            self.path = path
            self.text = text
        }
    }

    public func form(named name: String) -> FormDefinition? { forms.first { $0.name == name } }

    /// Problems that do not stop a start: an operator form's texts in a locale with no
    /// message catalogue are never shown (describe and sessions fall back to the locale
    /// `MessageCatalogues.resolve` gives, usually en).
    public private(set) var warnings: [ConfigError] = []

    /// Reads built-in and operator definitions. Every problem of every file is reported;
    /// a library is returned only when there are none.
    /// - Parameters:
    ///   - formFiles: operator `.form` files.
    ///   - messageFiles: operator `.messages` files; the locale is the file name's stem.
    public static func load(formFiles: [SourceFile] = [], messageFiles: [SourceFile] = []) -> Result<FormLibrary, ConfigErrors> {
        var errors: [ConfigError] = []
        var catalogues = MessageCatalogues()
        for (locale, text) in BuiltinCatalogues.files {
            do {
                catalogues.merge(try MessageFile.parse(text, locale: locale, file: "<built-in>/\(locale).messages", checkingPlaceholders: false))
            } catch { errors.append(error) }
        }
        let builtinIDs = Set(catalogues.byLocale["en"].map { Array($0.texts.keys) } ?? [])
        var localeFiles: [String: String] = [:]
        // The ids a refused English catalogue gives: its own errors are reported, not again in each form.
        var namedByRefused: Set<String> = []
        for file in messageFiles {
            let base = file.path.split(separator: "/").last.map(String.init) ?? file.path
            let locale = base.hasSuffix(".messages") ? String(base.dropLast(9)) : base
            let key = locale.replacing("_", with: "-").lowercased()
            if let previous = localeFiles[key] {
                errors.append(ConfigError(file: file.path, line: 1, column: 1, message: "the same locale as \(previous); keep one of the two files"))
                // Its ids are not reported again as unknown in each form (EN.messages beside
                // en.messages: helper-49).
                if key == "en" { namedByRefused.formUnion(MessageFile.ids(in: file.text, file: file.path)) }
                continue
            }
            localeFiles[key] = file.path
            switch MessageFile.parseAll(file.text, locale: locale, file: file.path) {
            case .success(let catalogue): catalogues.merge(catalogue)
            case .failure(let problems):
                errors += problems.errors
                // Forms may name what English has (`MessageCatalogues.knows`).
                if key == "en" { namedByRefused.formUnion(MessageFile.ids(in: file.text, file: file.path)) }
            }
        }
        var library = FormLibrary(forms: [], catalogues: catalogues, sources: [:])
        let knows = { (id: String) in catalogues.knows(id) || namedByRefused.contains(id) }
        for (name, text) in BuiltinForms.files {
            do {
                let form = try FormFile.parse(text, file: "<built-in>/\(name)", knowsMessage: knows, placeholderUses: catalogues.placeholderUses)
                library.forms.append(form)
                library.sources[form.name] = "<built-in>/\(name)"
            } catch { errors.append(error) }
        }
        var operatorForms: [String: String] = [:]
        for file in formFiles {
            do {
                let form: FormDefinition
                let (parsed, warnings) = FormFile.parseAllWithWarnings(file.text, file: file.path, knowsMessage: knows, placeholderUses: catalogues.placeholderUses)
                switch parsed {
                case .success(let parsed): form = parsed
                case .failure(let problems):
                    errors += problems.errors
                    continue
                }
                // About the form's name: at its `name =` (helper-49: at the `[form]` line).
                func atName(_ message: String) -> ConfigError {
                    let (line, column) = Self.nameLocation(in: file.text)
                    return ConfigError(file: file.path, line: line, column: column, message: message)
                }
                if let previous = operatorForms[form.name] {
                    errors.append(atName("form \"\(form.name)\" is also defined in \(previous)"))
                    continue
                }
                operatorForms[form.name] = file.path
                if let index = library.forms.firstIndex(where: { $0.name == form.name }) {
                    let builtin = library.forms[index]
                    // signupctl login and clients choose a built-in form by its name: a
                    // replacement must do the same thing with the same kind of identity.
                    guard builtin.action == form.action, builtin.identityKind == form.identityKind else {
                        errors.append(
                            atName(
                                "form \"\(form.name)\" replaces the built-in one, which has action = \(builtin.action.rawValue) and a \(builtin.identityKind.rawValue) identity; a replacement must keep both (this one: action = \(form.action.rawValue), \(form.identityKind.rawValue)); give it another name"
                            ))
                        continue
                    }
                    library.forms[index] = form
                } else {
                    library.forms.append(form)
                }
                library.sources[form.name] = file.path
                library.warnings += warnings + Self.unservedLocales(form, file: file, catalogues: catalogues)
            }
        }
        if errors.isEmpty, !messageFiles.isEmpty { library.warnings += Self.unusedIDs(in: messageFiles, builtin: builtinIDs, library: library) }
        // In file order, file by file (helper-50: a form's line 18 before its line 16).
        library.warnings = ConfigErrors.inFileOrder(library.warnings)
        return errors.isEmpty ? .success(library) : .failure(ConfigErrors(errors: errors))
    }

    /// An operator's catalogue id that nothing can send: not a built-in id, not one any rule
    /// can fail with, not named by any form's `as` or `ok` — a typo (`pasword.acceptable`)
    /// or a text waiting for a form (helper-49: said nothing).
    private static func unusedIDs(in messageFiles: [SourceFile], builtin: Set<String>, library: FormLibrary) -> [ConfigError] {
        var known = builtin.union(MessagePlaceholders.failureParameters.keys)
        for form in library.forms {
            for field in form.fields {
                known.insert(field.okMessageID)
                for spec in field.rules { if let id = spec.messageID { known.insert(id) } }
            }
        }
        return messageFiles.flatMap { file in
            MessageFile.idLines(in: file.text, file: file.path).filter { !known.contains($0.id) }.map {
                ConfigError(file: file.path, line: $0.line, column: $0.column, message: "warning: no form and no rule sends \"\($0.id)\" (a typo of a built-in id, or one for an `as` or `ok =` still to come)")
            }
        }
    }

    /// The line and column of a form file's `name =` value (1, 1 if it has none).
    private static func nameLocation(in text: String) -> (Int, Int) {
        let lines = text.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false)
        for (number, line) in lines.enumerated() {
            guard let equals = line.firstIndex(of: "=") else { continue }
            let key = line[..<equals].filter { $0 != " " && $0 != "\t" && $0 != "\u{FEFF}" }
            guard key.elementsEqual("name".unicodeScalars) else { continue }
            let value = line[line.index(after: equals)...].firstIndex { $0 != " " && $0 != "\t" } ?? equals
            return (number + 1, line.distance(from: line.startIndex, to: value) + 1)
        }
        return (1, 1)
    }

    private static func unservedLocales(_ form: FormDefinition, file: SourceFile, catalogues: MessageCatalogues) -> [ConfigError] {
        var locales = Set(form.titles.texts.keys).union(form.submitLabels.texts.keys)
        for field in form.fields { locales.formUnion(field.labels.texts.keys) }
        var result: [ConfigError] = []
        let lines = file.text.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false).map { String(String.UnicodeScalarView($0)) }
        for locale in locales.sorted() where catalogues.resolve(locale).lowercased() != locale.lowercased() {
            let suffix = "." + locale.lowercased()
            let number = lines.firstIndex { line in
                guard let equals = line.firstIndex(of: "=") else { return false }
                return line[..<equals].filter { $0 != " " && $0 != "\t" }.lowercased().replacing("_", with: "-").hasSuffix(suffix)
            }
            result.append(
                ConfigError(
                    file: file.path, line: (number ?? 0) + 1, column: 1,
                    message: "warning: texts in \(locale) but no \(locale).messages catalogue; describe and sessions in \(locale) use \(catalogues.resolve(locale)) (add messages.d/\(locale).messages)"
                ))
        }
        return result
    }

    /// The built-in forms and catalogues alone.
    public static let builtin: FormLibrary = {
        switch load() {
        case .success(let library): return library
        case .failure(let errors): fatalError("the built-in forms do not load: \(errors)")
        }
    }()
}

/// Every problem found in the configuration, in file order.
public struct ConfigErrors: Error, Sendable, CustomStringConvertible {
    public var errors: [ConfigError]

    public init(errors: [ConfigError]) {
        self.errors = errors
    }

    public var description: String { errors.map(\.description).joined(separator: "\n") }

    /// By file, then line, then column (a stable sort: one line's problems keep their order).
    public static func inFileOrder(_ errors: [ConfigError]) -> [ConfigError] {
        errors.enumerated().sorted { ($0.element.file, $0.element.line, $0.element.column, $0.offset) < ($1.element.file, $1.element.line, $1.element.column, $1.offset) }
            .map(\.element)
    }
}

extension MessageCatalogues {
    /// The shipped catalogues (`en`, `zh-CN`).
    public static var builtin: MessageCatalogues { FormLibrary.builtin.catalogues }
}
