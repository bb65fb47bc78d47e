#if canImport(Glibc)
import Glibc
#endif

/// Where signupd puts its socket and database when not told: systemd's directories
/// under a unit, the XDG ones for a user, /run and /var/lib for root by hand. There is
/// no fallback to a shared directory such as /tmp: another user could have made it first.
enum DefaultPaths {
    static func environment(_ name: String) -> String? {
        guard let value = getenv(name) else { return nil }
        let string = String(cString: value)
        return string.isEmpty ? nil : string
    }

    /// `$RUNTIME_DIRECTORY/signupd.sock`, `$XDG_RUNTIME_DIR/signupd.sock`, or
    /// `/run/signupd/signupd.sock` for root.
    static func socket() throws(DaemonError) -> String {
        if let dir = environment("RUNTIME_DIRECTORY")?.split(separator: ":").first { return "\(dir)/signupd.sock" }
        if let dir = environment("XDG_RUNTIME_DIR") { return "\(dir)/signupd.sock" }
        guard getuid() == 0 else {
            throw .startup("no place for the socket: XDG_RUNTIME_DIR is not set; pass --socket PATH or set SIGNUPD_SOCKET (signupd never falls back to /tmp)")
        }
        return "/run/signupd/signupd.sock"
    }

    /// `$STATE_DIRECTORY/accounts.sqlite`, `$XDG_STATE_HOME/signupd/...`,
    /// `~/.local/state/signupd/...`, or `/var/lib/signupd/...` for root.
    static func database() throws(DaemonError) -> String {
        if let dir = environment("STATE_DIRECTORY")?.split(separator: ":").first { return "\(dir)/accounts.sqlite" }
        if getuid() == 0 { return "/var/lib/signupd/accounts.sqlite" }
        if let dir = environment("XDG_STATE_HOME") { return "\(dir)/signupd/accounts.sqlite" }
        if let home = environment("HOME") { return "\(home)/.local/state/signupd/accounts.sqlite" }
        throw .startup("no place for the database: neither XDG_STATE_HOME nor HOME is set; pass --database PATH (signupd never falls back to /tmp)")
    }
}
