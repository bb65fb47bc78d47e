import UnixIO

#if canImport(Glibc)
import Glibc
#endif

/// The controlling terminal (`/dev/tty`, so standard output stays free for the token) in
/// raw mode on the alternate screen, or with echo off for a password prompt. Whatever
/// happens — a normal exit, Esc, Ctrl-C, SIGTERM, SIGHUP, a daemon that goes away —
/// `restore()` puts it back as it was.
///
/// The signal handlers are async-signal-safe: everything they need (the descriptor, the
/// saved modes, the bytes that leave the alternate screen) is computed before they are
/// installed and kept in memory that is never freed; they call only write(2),
/// tcsetattr(3), signal(2) and raise(3).
enum Terminal {
    enum Mode {
        /// Full-screen: raw input, alternate screen, bracketed paste.
        case fullScreen
        /// A line prompt read key by key: no echo (signupctl echoes), no signals from keys.
        case lineByKey
    }

    /// What the signal handlers read. Allocated once and never freed.
    private struct RestoreState {
        var fd: Int32 = -1
        var active: Int32 = 0
        var saved = termios()
        var bytes: (count: Int, storage: UnsafeMutablePointer<UInt8>?) = (0, nil)
        /// The write end of the resize pipe, or -1.
        var resizePipe: Int32 = -1
    }

    nonisolated(unsafe) private static let state: UnsafeMutablePointer<RestoreState> = {
        let pointer = UnsafeMutablePointer<RestoreState>.allocate(capacity: 1)
        pointer.initialize(to: RestoreState())
        return pointer
    }()
    nonisolated(unsafe) private static var handlersInstalled = false

    /// Opens the controlling terminal for reading and writing, or nil when there is none.
    static func open() -> Int32? {
        let fd = Glibc.open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY)
        return fd >= 0 ? fd : nil
    }

    /// Whether colour should be used: no `NO_COLOR`.
    static var colorAllowed: Bool {
        if let noColor = getenv("NO_COLOR"), noColor.pointee != 0 { return false }
        return true
    }

    /// Whether the terminal can do cursor addressing: `TERM` is set, not `dumb`, and has a
    /// terminfo entry. When not, the forms ask line by line.
    static var canAddressCursor: Bool {
        guard let value = getenv("TERM"), value.pointee != 0 else { return false }
        let term = String(cString: value)
        if term == "dumb" || term.contains("/") { return false }
        var directories: [String] = []
        if let custom = getenv("TERMINFO") { directories.append(String(cString: custom)) }
        if let home = getenv("HOME") { directories.append(String(cString: home) + "/.terminfo") }
        if let dirs = getenv("TERMINFO_DIRS") {
            directories += String(cString: dirs).split(separator: ":", omittingEmptySubsequences: false).map { $0.isEmpty ? "/usr/share/terminfo" : String($0) }
        }
        directories += ["/etc/terminfo", "/lib/terminfo", "/usr/share/terminfo", "/usr/lib/terminfo"]
        let first = term.first.map(String.init) ?? ""
        let hex = String(term.utf8.first ?? 0, radix: 16)
        return directories.contains { access("\($0)/\(first)/\(term)", R_OK) == 0 || access("\($0)/\(hex)/\(term)", R_OK) == 0 }
    }

    /// Switches `fd` into `mode`; `resizePipe` (a write end) gets a byte on every SIGWINCH.
    static func enter(_ mode: Mode, fd: Int32, resizePipe: Int32 = -1) {
        var saved = termios()
        guard tcgetattr(fd, &saved) == 0 else { return }
        let leave: String
        var changed = saved
        switch mode {
        case .fullScreen:
            changed.c_lflag &= ~tcflag_t(ECHO | ICANON | ISIG | IEXTEN)
            changed.c_iflag &= ~tcflag_t(IXON | ICRNL | INLCR)
            withUnsafeMutableBytes(of: &changed.c_cc) { cc in
                cc[Int(VMIN)] = 1
                cc[Int(VTIME)] = 0
            }
            leave = "\u{1B}[?2004l\u{1B}[0m\u{1B}[?25h\u{1B}[?1049l"
        case .lineByKey:
            changed.c_lflag &= ~tcflag_t(ECHO | ICANON | ISIG | IEXTEN)
            changed.c_iflag &= ~tcflag_t(IXON)
            withUnsafeMutableBytes(of: &changed.c_cc) { cc in
                cc[Int(VMIN)] = 1
                cc[Int(VTIME)] = 0
            }
            leave = "\n"
        }
        // Everything the handlers need, before they can run.
        let bytes = Array(leave.utf8)
        let storage = UnsafeMutablePointer<UInt8>.allocate(capacity: bytes.count)
        storage.initialize(from: bytes, count: bytes.count)
        let old = state.pointee.bytes.storage
        state.pointee = RestoreState(fd: fd, active: 0, saved: saved, bytes: (bytes.count, storage), resizePipe: resizePipe)
        old?.deallocate()
        installHandlers()
        state.pointee.active = 1
        tcsetattr(fd, TCSADRAIN, &changed)  // not FLUSH: keys typed ahead are kept
        if mode == .fullScreen { write("\u{1B}[?1049h\u{1B}[H\u{1B}[2J\u{1B}[?2004h") }
    }

    /// Puts the terminal back. Idempotent.
    static func restore() {
        guard state.pointee.active != 0 else { return }
        state.pointee.active = 0
        let s = state.pointee
        if let storage = s.bytes.storage { UnixIO.writeAll(s.fd, Array(UnsafeBufferPointer(start: storage, count: s.bytes.count))) }
        var saved = s.saved
        tcsetattr(s.fd, TCSADRAIN, &saved)
        state.pointee.resizePipe = -1
    }

    private static func installHandlers() {
        guard !handlersInstalled else { return }
        handlersInstalled = true
        for sig in [SIGTERM, SIGHUP, SIGQUIT, SIGINT] {
            signal(sig) { number in Terminal.restoreFromSignal(number) }
        }
        signal(SIGWINCH) { _ in Terminal.resized() }
        atexit { Terminal.restore() }
    }

    /// Runs in a signal handler: only async-signal-safe calls, no allocation, no locks.
    private static func restoreFromSignal(_ number: Int32) {
        let s = state
        if s.pointee.active != 0 {
            s.pointee.active = 0
            if let storage = s.pointee.bytes.storage { _ = Glibc.write(s.pointee.fd, storage, s.pointee.bytes.count) }
            withUnsafePointer(to: &s.pointee.saved) { _ = tcsetattr(s.pointee.fd, TCSANOW, $0) }
        }
        signal(number, SIG_DFL)
        raise(number)
    }

    /// Runs in a signal handler: one byte down the resize pipe, which never blocks.
    private static func resized() {
        let fd = state.pointee.resizePipe
        guard fd >= 0 else { return }
        var byte: UInt8 = 0x57
        let saved = errno
        _ = Glibc.write(fd, &byte, 1)
        errno = saved
    }

    /// The window size of the terminal.
    static func size(of fd: Int32) -> (columns: Int, rows: Int) {
        var window = winsize()
        guard ioctl(fd, UInt(TIOCGWINSZ), &window) == 0, window.ws_col > 0, window.ws_row > 0 else { return (80, 24) }
        return (Int(window.ws_col), Int(window.ws_row))
    }

    /// Writes to the terminal being used.
    static func write(_ text: String) {
        UnixIO.writeAll(state.pointee.fd, Array(text.utf8))
    }

    /// A pipe whose read end wakes the form on resize: (read, write), both non-blocking.
    static func makeResizePipe() -> (read: Int32, write: Int32)? {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { return nil }
        for fd in fds {
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        }
        return (fds[0], fds[1])
    }
}
