#if canImport(Glibc)
import Glibc
#endif

/// Reads a line from the terminal with echo off.
enum PasswordPrompt {
    static func read(_ prompt: String) -> String {
        var out = prompt
        out.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
        var saved = termios()
        let isTerminal = tcgetattr(0, &saved) == 0
        if isTerminal {
            var quiet = saved
            quiet.c_lflag &= ~tcflag_t(ECHO)
            tcsetattr(0, TCSANOW, &quiet)
        }
        defer {
            if isTerminal {
                tcsetattr(0, TCSANOW, &saved)
                _ = write(2, "\n", 1)
            }
        }
        var bytes: [UInt8] = []
        var byte: UInt8 = 0
        while Glibc.read(0, &byte, 1) == 1 && byte != 0x0A { bytes.append(byte) }
        return String(decoding: bytes, as: UTF8.self)
    }
}
