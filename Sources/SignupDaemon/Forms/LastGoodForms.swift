import FormEngine
import UnixIO

#if canImport(Glibc)
import Glibc
#endif

/// The operator files of the last form configuration that loaded, kept beside the account
/// database as `forms.last-good` (0600). An operator's typo in forms.d then costs a warning,
/// not the service: a start (after an idle exit, a restart or an upgrade) that cannot load
/// forms.d serves these files and says why (issue 27), until a reload or start loads the
/// directories again.
///
/// The format is length-prefixed text, so any file content survives unchanged:
///
///     signupd-forms-last-good 1
///     saved UNIX-SECONDS
///     form BYTES PATH        (then BYTES bytes of the file, then a newline)
///     messages BYTES PATH    (likewise)
struct LastGoodForms: Sendable {
    let path: String

    static let fileName = "forms.last-good"
    private static let header = "signupd-forms-last-good 1"

    /// The files and when they were saved.
    struct Saved: Sendable {
        var sources: FormSources
        var savedAt: Int64
    }

    /// Keeps `sources` unless the file already holds the same files. Written to a new file
    /// and renamed over the old one: a crash leaves the old or the new, never half.
    func save(_ sources: FormSources, now: Int64) throws(LastGoodFormsError) {
        if case .success(let saved) = load(), saved.sources == sources { return }
        var bytes = Array("\(Self.header)\nsaved \(now)\n".utf8)
        for (kind, files) in [("form", sources.forms), ("messages", sources.messages)] {
            for file in files {
                let text = Array(file.text.utf8)
                bytes += Array("\(kind) \(text.count) \(file.path)\n".utf8) + text + [0x0A]
            }
        }
        let temporary = path + ".new"
        unlink(temporary)
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw .cannotWrite(temporary, UnixIO.errnoText()) }
        if let code = UnixIO.writeAll(fd, bytes) {
            close(fd)
            unlink(temporary)
            throw .cannotWrite(temporary, code == 0 ? "the disk is full" : UnixIO.errnoText(code))
        }
        fsync(fd)
        close(fd)
        guard rename(temporary, path) == 0 else {
            let text = UnixIO.errnoText()
            unlink(temporary)
            throw .cannotWrite(path, text)
        }
    }

    /// The saved files, or why there are none to use.
    func load() -> Result<Saved, LastGoodFormsError> {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else {
            let code = errno
            return .failure(code == ENOENT ? .none : .unreadable(path, UnixIO.errnoText(code)))
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, info.st_size <= 64 << 20 else {
            return .failure(.unreadable(path, "not a regular file of at most 64 MiB"))
        }
        var bytes = [UInt8](repeating: 0, count: Int(info.st_size))
        var filled = 0
        while filled < bytes.count {
            let count = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress! + filled, $0.count - filled) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            filled += count
        }
        guard filled == bytes.count, let saved = Self.parse(bytes) else { return .failure(.unreadable(path, "damaged")) }
        return .success(saved)
    }

    private static func parse(_ bytes: [UInt8]) -> Saved? {
        var position = 0
        func line() -> String? {
            guard let end = bytes[position...].firstIndex(of: 0x0A) else { return nil }
            defer { position = end + 1 }
            return String(validating: bytes[position..<end], as: UTF8.self)
        }
        guard line() == header, let saved = line(), saved.hasPrefix("saved "), let savedAt = Int64(saved.dropFirst(6)) else { return nil }
        var sources = FormSources()
        while position < bytes.count {
            guard let entry = line() else { return nil }
            let parts = entry.split(separator: " ", maxSplits: 2).map(String.init)
            guard parts.count == 3, let length = Int(parts[1]), length >= 0, position + length < bytes.count,
                bytes[position + length] == 0x0A,
                let text = String(validating: bytes[position..<position + length], as: UTF8.self)
            else { return nil }
            position += length + 1
            let file = FormLibrary.SourceFile(path: parts[2], text: text)
            switch parts[0] {
            case "form": sources.forms.append(file)
            case "messages": sources.messages.append(file)
            default: return nil
            }
        }
        return Saved(sources: sources, savedAt: savedAt)
    }
}

/// Why the last good configuration could not be kept or read.
enum LastGoodFormsError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Nothing was saved yet.
    case none
    case unreadable(String, String)
    case cannotWrite(String, String)

    var description: String {
        switch self {
        case .none: "no configuration has loaded here before"
        case .unreadable(let path, let why): "\(path): cannot be read: \(why)"
        case .cannotWrite(let path, let why): "\(path): cannot be written: \(why)"
        }
    }
}
