#if canImport(Glibc)
import Glibc
#endif

/// The controlling terminal in raw mode on the alternate screen. Whatever happens — a
/// normal exit, Esc, Ctrl-C, SIGTERM, SIGHUP, a daemon that goes away — `restore()` puts
/// it back as it was.
enum Terminal {
    nonisolated(unsafe) private static var saved = termios()
    nonisolated(unsafe) private static var active = false

    /// Whether colour should be used: a terminal, not `TERM=dumb`, and no `NO_COLOR`.
    static var colorAllowed: Bool {
        if let noColor = getenv("NO_COLOR"), noColor.pointee != 0 { return false }
        guard let term = getenv("TERM") else { return false }
        return String(cString: term) != "dumb"
    }

    static func enter() {
        guard tcgetattr(0, &saved) == 0 else { return }
        var raw = saved
        raw.c_lflag &= ~tcflag_t(ECHO | ICANON | ISIG | IEXTEN)
        raw.c_iflag &= ~tcflag_t(IXON | ICRNL)
        withUnsafeMutableBytes(of: &raw.c_cc) { cc in
            cc[Int(VMIN)] = 1
            cc[Int(VTIME)] = 0
        }
        tcsetattr(0, TCSAFLUSH, &raw)
        active = true
        for sig in [SIGTERM, SIGHUP, SIGQUIT] {
            signal(sig) { number in
                Terminal.restore()
                signal(number, SIG_DFL)
                raise(number)
            }
        }
        atexit { Terminal.restore() }
        write("\u{1B}[?1049h\u{1B}[H\u{1B}[2J")
    }

    /// Leaves the alternate screen and restores the saved terminal modes. Idempotent.
    static func restore() {
        guard active else { return }
        active = false
        write("\u{1B}[?25h\u{1B}[?1049l")
        tcsetattr(0, TCSAFLUSH, &saved)
    }

    /// The window size, 80×24 when unknown.
    static var size: (columns: Int, rows: Int) {
        var window = winsize()
        guard ioctl(1, UInt(TIOCGWINSZ), &window) == 0, window.ws_col > 0 else { return (80, 24) }
        return (Int(window.ws_col), Int(window.ws_row))
    }

    static func write(_ text: String) {
        var text = text
        text.withUTF8 { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = Glibc.write(1, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 && errno == EINTR { continue }
                guard written > 0 else { return }
                offset += written
            }
        }
    }
}
