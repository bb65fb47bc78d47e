import FormEngine
import UnixIO

#if canImport(Glibc)
import Glibc
#endif

/// Where operators put forms and message catalogues, and reading them.
struct FormDirectories: Sendable {
    /// `*.form` files, read in name order.
    var forms: String
    /// `LOCALE.messages` files.
    var messages: String
    /// Whether a missing directory is an error (given on the command line) or means
    /// "no operator files" (the defaults), each on its own: `--forms-dir` alone does not
    /// make the default messages directory required.
    var formsRequired: Bool
    var messagesRequired: Bool
    /// Whom the files are checked for (`--check-config` by root: the service); nil: this process.
    var reader: ConfigReader?

    static let defaultForms = "/etc/signupd/forms.d"
    static let defaultMessages = "/etc/signupd/messages.d"

    /// Reads both directories and builds the library on top of the built-in forms.
    func load() -> Result<FormLibrary, ConfigErrors> {
        loadWithSources().map(\.library)
    }

    /// The library with the files it was built from (kept as the last good configuration).
    func loadWithSources() -> Result<LoadedForms, ConfigErrors> {
        var problems: [ConfigError] = []
        let sources = FormSources(
            forms: Self.read(forms, suffix: ".form", required: formsRequired, reader: reader, problems: &problems),
            messages: Self.read(messages, suffix: ".messages", required: messagesRequired, reader: reader, problems: &problems)
        )
        switch sources.build() {
        case .success(let library):
            return problems.isEmpty ? .success(LoadedForms(library: library, sources: sources)) : .failure(ConfigErrors(errors: problems))
        case .failure(let errors):
            return .failure(ConfigErrors(errors: problems + errors.errors))
        }
    }

    /// The files of `directory` ending in `suffix`, sorted by name. Other files are skipped
    /// (editor backups, `.dpkg-old`), so that a package upgrade cannot break a start.
    private static func read(_ directory: String, suffix: String, required: Bool, reader: ConfigReader?, problems: inout [ConfigError]) -> [FormLibrary.SourceFile] {
        guard let handle = opendir(directory) else {
            let code = errno
            if code == ENOENT, !required { return [] }
            problems.append(ConfigError(file: directory, line: 0, column: 0, message: "cannot read the directory: \(UnixIO.errnoText(code))"))
            return []
        }
        defer { closedir(handle) }
        // The same rule as the daemon's private directories (OpenSSH's): whoever can write
        // here could change every form; refuse it rather than read it.
        do { try PrivateDirectory.check(directory, runsAs: reader?.uid ?? geteuid()) } catch {
            problems.append(ConfigError(file: directory, line: 0, column: 0, message: error.description))
            return []
        }
        var info = stat()
        if let reader, reader.isSomeoneElse, stat(directory, &info) == 0, let refusal = reader.refusal(info, directory: true) {
            problems.append(ConfigError(file: directory, line: 0, column: 0, message: refusal))
            return []
        }
        var names: [String] = []
        while let entry = readdir(handle) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self) }
            if name.hasSuffix(suffix), !name.hasPrefix(".") { names.append(name) }
        }
        var files: [FormLibrary.SourceFile] = []
        for name in names.sorted() {
            let path = directory.hasSuffix("/") ? directory + name : directory + "/" + name
            switch readFile(path, reader: reader) {
            case .success(let text): files.append(FormLibrary.SourceFile(path: path, text: text))
            case .failure(let failure): problems.append(ConfigError(file: path, line: failure.line, column: failure.line == 0 ? 0 : 1, message: failure.message))
            }
        }
        return files
    }

    /// A regular file of at most 1 MiB, as UTF-8.
    private struct ReadFailure: Error {
        var message: String
        /// The line at fault, or 0 for the whole file.
        var line: Int
        init(_ message: String, line: Int = 0) {
            self.message = message
            self.line = line
        }
    }

    private static func readFile(_ path: String, reader: ConfigReader?) -> Result<String, ReadFailure> {
        // A symbolic link is followed (packages link files into place); what it leads to is
        // checked like any file.
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else {
            let code = errno
            if code == ELOOP { return .failure(ReadFailure("cannot open: a loop of symbolic links (or more than 40 in a row)")) }
            return .failure(ReadFailure("cannot open: \(UnixIO.errnoText(code))"))
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return .failure(ReadFailure("not a regular file")) }
        if let refusal = PrivateDirectory.fileRefusal(info, runsAs: reader?.uid ?? geteuid()) { return .failure(ReadFailure(refusal)) }
        if let reader, reader.isSomeoneElse, let refusal = reader.refusal(info, directory: false) { return .failure(ReadFailure(refusal)) }
        guard info.st_size <= 1 << 20 else { return .failure(ReadFailure("larger than 1 MiB")) }
        var bytes = [UInt8](repeating: 0, count: Int(info.st_size))
        var filled = 0
        while filled < bytes.count {
            let count = bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + filled, $0.count - filled) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            filled += count
        }
        bytes.removeLast(bytes.count - filled)
        guard let text = String(validating: bytes, as: UTF8.self) else {
            let lines = bytes.split(separator: 0x0A, omittingEmptySubsequences: false)
            let bad = lines.firstIndex { String(validating: $0, as: UTF8.self) == nil } ?? 0
            return .failure(ReadFailure("not valid UTF-8", line: bad + 1))
        }
        return .success(text)
    }
}

/// The operator files a library is built from.
struct FormSources: Sendable, Equatable {
    var forms: [FormLibrary.SourceFile] = []
    var messages: [FormLibrary.SourceFile] = []

    func build() -> Result<FormLibrary, ConfigErrors> {
        FormLibrary.load(formFiles: forms, messageFiles: messages)
    }
}

/// A library and the files it came from.
struct LoadedForms: Sendable {
    var library: FormLibrary
    var sources: FormSources
}
