import UnixIO

#if canImport(Glibc)
import Glibc
#endif

/// The directories signupd keeps its socket and database in, checked the way OpenSSH
/// (`StrictModes`) and tmux check theirs: every directory on the way must belong to root
/// or to signupd's own user, and none may be writable by anyone else — except a sticky
/// ancestor such as `/tmp`, where nobody can rename what another user owns. A directory
/// that fails is refused with the reason; nothing in it is opened.
enum PrivateDirectory {
    /// Checks the directory that will hold `path`. With `create`, missing directories are
    /// made first (the last one with `mode`, ancestors 0700); without it a missing
    /// directory is an error that names it and the option it came from.
    /// `sharedSticky`: the directory itself may be a sticky, root-owned shared one such as
    /// `/tmp` (for the socket: nobody else can remove or replace it there).
    static func prepare(parentOf path: String, create: Bool, mode: mode_t, option: String, sharedSticky: Bool = false) throws(DaemonError) {
        let directory = parent(of: path)
        if !exists(directory) {
            guard create else {
                throw .startup("\(option) \(path): the directory \(directory) does not exist; create it first (mode 0700)")
            }
            try makeDirectories(directory, mode: mode)
        }
        try check(directory, sharedSticky: sharedSticky)
    }

    /// Refuses `directory` unless it and every directory above it are safe (see the type).
    /// `sharedSticky`: `directory` itself may be sticky, root-owned and writable by all.
    /// `runsAs`: the uid signupd runs as (`--check-config` by root: the service's user).
    static func check(_ directory: String, sharedSticky: Bool = false, runsAs me: uid_t = geteuid()) throws(DaemonError) {
        guard let resolved = realpath(directory, nil) else {
            throw .startup("cannot resolve \(directory): \(UnixIO.errnoText(errno))")
        }
        let real = String(cString: resolved)
        free(resolved)
        var prefix = ""
        let components = real.split(separator: "/").map(String.init)
        for (index, component) in ([""] + components).enumerated() {
            prefix = index == 0 ? "/" : (prefix == "/" ? "/\(component)" : "\(prefix)/\(component)")
            var info = stat()
            guard stat(prefix, &info) == 0 else { throw .startup("cannot inspect \(prefix): \(UnixIO.errnoText(errno))") }
            let isLast = index == components.count
            let shown = prefix == real ? directory : prefix
            guard info.st_uid == 0 || info.st_uid == me else {
                throw .startup("refusing \(shown): it belongs to uid \(info.st_uid), not to root or to uid \(me) that signupd runs as; nothing in it was read")
            }
            let sticky = info.st_mode & S_ISVTX != 0
            let sharedAllowed = sticky && (!isLast || (sharedSticky && info.st_uid == 0))
            if info.st_mode & (S_IWGRP | S_IWOTH) != 0 && !sharedAllowed {
                let mode = String(info.st_mode & 0o7777, radix: 8)
                // A shared directory such as /tmp must stay writable by all: the advice is
                // a private directory in it, never a chmod of it.
                let advice = sticky ? "it is a shared directory; use a directory of signupd's own in it (mode 0700)" : "run chmod go-w on it"
                throw .startup("refusing \(shown): it is writable by group or others (mode 0\(mode)); \(advice); nothing in it was read")
            }
        }
    }

    /// Why a file signupd reads its configuration or trust from (a form, a CA file) must be
    /// refused: it belongs to someone other than root or signupd's user, or others could
    /// rewrite it. Nil when it is safe to read.
    /// `writable`: what to do about a file others could write (the phone library: it may
    /// have been changed, so it is put back, not just made private).
    static func fileRefusal(_ info: stat, runsAs me: uid_t = geteuid(), writable advice: String = "run chmod go-w on it") -> String? {
        guard info.st_uid == 0 || info.st_uid == me else {
            return "refusing it: it belongs to uid \(info.st_uid), not to root or to uid \(me) that signupd runs as"
        }
        guard info.st_mode & (S_IWGRP | S_IWOTH) == 0 else {
            let mode = String(info.st_mode & 0o7777, radix: 8)
            return "refusing it: it is writable by group or others (mode 0\(mode)); \(advice)"
        }
        return nil
    }

    /// Refuses a database whose files belong to another user — root included: a database
    /// opened once by root by hand would leave root-owned `-wal`/`-shm` files the service's
    /// own user can no longer open.
    static func checkDatabaseOwner(_ database: String) throws(DaemonError) {
        let me = geteuid()
        for path in [database, "\(database)-wal", "\(database)-shm"] {
            var info = stat()
            guard lstat(path, &info) == 0 else { continue }
            guard (info.st_mode & S_IFMT) == S_IFREG else {
                throw .startup("refusing \(path): it is not a regular file")
            }
            guard info.st_uid == me else {
                throw .startup("refusing \(path): it belongs to uid \(info.st_uid), not to uid \(me) that signupd runs as; run signupd as that user (for the system service: runuser -u signupd -- signupd …) or chown the database's files")
            }
        }
    }

    /// Makes the files SQLite keeps for `database` (itself, `-wal`, `-shm`, `-journal`)
    /// private to signupd's user: 0600, whatever the umask they were made under.
    /// Returns the files whose mode had to be narrowed.
    @discardableResult
    static func restrictDatabaseFiles(_ database: String) -> [String] {
        var narrowed: [String] = []
        for path in [database, "\(database)-wal", "\(database)-shm", "\(database)-journal"] {
            var info = stat()
            guard lstat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, info.st_mode & 0o077 != 0 else { continue }
            if chmod(path, 0o600) == 0 { narrowed.append(path) }
        }
        return narrowed
    }

    /// The directory `path` is in: "." for a bare name, "/" for a name at the root.
    static func parent(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    private static func exists(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0
    }

    private static func makeDirectories(_ directory: String, mode: mode_t) throws(DaemonError) {
        var prefix = directory.hasPrefix("/") ? "" : "."
        let components = directory.split(separator: "/")
        for (index, component) in components.enumerated() {
            prefix += "/\(component)"
            let isLast = index == components.count - 1
            if mkdir(prefix, isLast ? mode : 0o700) == 0 {
                // mkdir applies the umask; the mode asked for is the mode meant.
                if isLast { chmod(prefix, mode) }
            } else if errno != EEXIST {
                throw .startup("cannot create \(prefix): \(UnixIO.errnoText(errno))")
            }
        }
    }
}
