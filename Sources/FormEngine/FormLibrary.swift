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
    public struct SourceFile: Sendable {
        public var path: String
        public var text: String

        public init(path: String, text: String) {
            self.path = path
            self.text = text
        }
    }

    public func form(named name: String) -> FormDefinition? { forms.first { $0.name == name } }

    /// Reads built-in and operator definitions. Every problem of every file is reported;
    /// a library is returned only when there are none.
    /// - Parameters:
    ///   - formFiles: operator `.form` files.
    ///   - messageFiles: operator `.messages` files; the locale is the file name's stem.
    public static func load(formFiles: [SourceFile] = [], messageFiles: [SourceFile] = []) -> Result<FormLibrary, ConfigErrors> {
        var errors: [ConfigError] = []
        var catalogues = MessageCatalogues()
        for (locale, text) in BuiltinCatalogues.files {
            do { catalogues.merge(try MessageFile.parse(text, locale: locale, file: "<built-in>/\(locale).messages")) } catch { errors.append(error) }
        }
        for file in messageFiles {
            let base = file.path.split(separator: "/").last.map(String.init) ?? file.path
            let locale = base.hasSuffix(".messages") ? String(base.dropLast(9)) : base
            do { catalogues.merge(try MessageFile.parse(file.text, locale: locale, file: file.path)) } catch { errors.append(error) }
        }
        var library = FormLibrary(forms: [], catalogues: catalogues, sources: [:])
        let knows = { (id: String) in catalogues.knows(id) }
        for (name, text) in BuiltinForms.files {
            do {
                let form = try FormFile.parse(text, file: "<built-in>/\(name)", knowsMessage: knows)
                library.forms.append(form)
                library.sources[form.name] = "<built-in>/\(name)"
            } catch { errors.append(error) }
        }
        var operatorForms: [String: String] = [:]
        for file in formFiles {
            do {
                let form = try FormFile.parse(file.text, file: file.path, knowsMessage: knows)
                if let previous = operatorForms[form.name] {
                    errors.append(ConfigError(file: file.path, line: 1, column: 1, message: "form \"\(form.name)\" is also defined in \(previous)"))
                    continue
                }
                operatorForms[form.name] = file.path
                if let index = library.forms.firstIndex(where: { $0.name == form.name }) {
                    library.forms[index] = form
                } else {
                    library.forms.append(form)
                }
                library.sources[form.name] = file.path
            } catch { errors.append(error) }
        }
        return errors.isEmpty ? .success(library) : .failure(ConfigErrors(errors: errors))
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
}

extension MessageCatalogues {
    /// The shipped catalogues (`en`, `zh-CN`).
    public static var builtin: MessageCatalogues { FormLibrary.builtin.catalogues }
}
