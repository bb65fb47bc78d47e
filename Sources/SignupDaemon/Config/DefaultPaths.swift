#if canImport(Glibc)
import Glibc
#endif

/// Where signupd puts its socket and database when not told: systemd's directories
/// under a unit, the XDG ones for a user, /run and /var/lib for root by hand.
enum DefaultPaths {
    static func environment(_ name: String) -> String? {
        guard let value = getenv(name) else { return nil }
        let string = String(cString: value)
        return string.isEmpty ? nil : string
    }

    /// `$RUNTIME_DIRECTORY/signupd.sock`, `$XDG_RUNTIME_DIR/signupd.sock`, or
    /// `/run/signupd/signupd.sock` for root.
    static var socket: String {
        if let dir = environment("RUNTIME_DIRECTORY")?.split(separator: ":").first { return "\(dir)/signupd.sock" }
        if let dir = environment("XDG_RUNTIME_DIR") { return "\(dir)/signupd.sock" }
        return getuid() == 0 ? "/run/signupd/signupd.sock" : "/tmp/signupd-\(getuid())/signupd.sock"
    }

    /// `$STATE_DIRECTORY/accounts.sqlite`, `$XDG_STATE_HOME/signupd/...`,
    /// `~/.local/state/signupd/...`, or `/var/lib/signupd/...` for root.
    static var database: String {
        if let dir = environment("STATE_DIRECTORY")?.split(separator: ":").first { return "\(dir)/accounts.sqlite" }
        if getuid() == 0 { return "/var/lib/signupd/accounts.sqlite" }
        if let dir = environment("XDG_STATE_HOME") { return "\(dir)/signupd/accounts.sqlite" }
        if let home = environment("HOME") { return "\(home)/.local/state/signupd/accounts.sqlite" }
        return "/tmp/signupd-\(getuid())/accounts.sqlite"
    }

    /// Creates the parent directories of `path` (mode 0700 for new ones).
    static func createParent(of path: String) throws(DaemonError) {
        var prefix = ""
        let components = path.split(separator: "/", omittingEmptySubsequences: false).dropLast()
        for component in components where !component.isEmpty {
            prefix += "/\(component)"
            if mkdir(prefix, 0o700) != 0 && errno != EEXIST {
                throw .startup("cannot create \(prefix): \(errnoText(errno))")
            }
        }
    }
}
