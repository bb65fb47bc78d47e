import FormEngine

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
    /// "no operator files" (the defaults).
    var required: Bool

    static let defaultForms = "/etc/signupd/forms.d"
    static let defaultMessages = "/etc/signupd/messages.d"

    /// Reads both directories and builds the library on top of the built-in forms.
    func load() -> Result<FormLibrary, ConfigErrors> {
        var problems: [ConfigError] = []
        let formFiles = Self.read(forms, suffix: ".form", required: required, problems: &problems)
        let messageFiles = Self.read(messages, suffix: ".messages", required: required, problems: &problems)
        switch FormLibrary.load(formFiles: formFiles, messageFiles: messageFiles) {
        case .success(let library):
            return problems.isEmpty ? .success(library) : .failure(ConfigErrors(errors: problems))
        case .failure(let errors):
            return .failure(ConfigErrors(errors: problems + errors.errors))
        }
    }

    /// The files of `directory` ending in `suffix`, sorted by name. Other files are skipped
    /// (editor backups, `.dpkg-old`), so that a package upgrade cannot break a start.
    private static func read(_ directory: String, suffix: String, required: Bool, problems: inout [ConfigError]) -> [FormLibrary.SourceFile] {
        guard let handle = opendir(directory) else {
            let code = errno
            if code == ENOENT, !required { return [] }
            problems.append(ConfigError(file: directory, line: 0, column: 0, message: "cannot read the directory: \(String(cString: strerror(code)))"))
            return []
        }
        defer { closedir(handle) }
        var names: [String] = []
        while let entry = readdir(handle) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self) }
            if name.hasSuffix(suffix), !name.hasPrefix(".") { names.append(name) }
        }
        var files: [FormLibrary.SourceFile] = []
        for name in names.sorted() {
            let path = directory.hasSuffix("/") ? directory + name : directory + "/" + name
            switch readFile(path) {
            case .success(let text): files.append(FormLibrary.SourceFile(path: path, text: text))
            case .failure(let failure): problems.append(ConfigError(file: path, line: 0, column: 0, message: failure.message))
            }
        }
        return files
    }

    /// A regular file of at most 1 MiB, as UTF-8.
    private struct ReadFailure: Error {
        var message: String
        init(_ message: String) { self.message = message }
    }

    private static func readFile(_ path: String) -> Result<String, ReadFailure> {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else { return .failure(ReadFailure("cannot open: \(String(cString: strerror(errno)))")) }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return .failure(ReadFailure("not a regular file")) }
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
        guard let text = String(validating: bytes, as: UTF8.self) else { return .failure(ReadFailure("not valid UTF-8")) }
        return .success(text)
    }
}
