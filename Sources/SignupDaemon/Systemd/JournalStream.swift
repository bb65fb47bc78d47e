#if canImport(Glibc)
import Glibc
#endif

/// Whether stderr is connected to the journal. systemd sets `JOURNAL_STREAM` to the device
/// and inode of that stream (systemd.exec(5)); a value that does not name stderr (inherited
/// by a process whose stderr went elsewhere, or forged) does not count, so that signupd's
/// lines, and the reason a start failed, are never sent where the person running it does
/// not look (helper-44: `JOURNAL_STREAM=garbage` made a failed start silent).
enum JournalStream {
    static func isStandardError(_ value: String? = DefaultPaths.environment("JOURNAL_STREAM")) -> Bool {
        guard let value else { return false }
        let parts = value.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]) else { return false }
        var status = stat()
        guard fstat(2, &status) == 0 else { return false }
        return UInt64(status.st_dev) == device && UInt64(status.st_ino) == inode
    }

    /// `<3>` when stderr is the journal's stream: journald reads it as the line's priority
    /// (err; SyslogLevelPrefix=, on by default), so `journalctl -p err` shows why a start
    /// failed. Empty elsewhere.
    static var errorPrefix: String { isStandardError() ? "<3>" : "" }

    /// `<4>` (warning) when stderr is the journal's stream; empty elsewhere.
    static var warningPrefix: String { isStandardError() ? "<4>" : "" }
}
