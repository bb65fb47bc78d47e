#if canImport(Glibc)
import Glibc
#endif

/// Line prompts on the controlling terminal: with echo off for secrets (restored by
/// `Terminal`, also from a signal), or plain.
enum PasswordPrompt {
    /// Reads one line from `fd` after writing `prompt` to it; nil at end of input.
    static func read(_ prompt: String, fd: Int32, secret: Bool) -> String? {
        // Echo goes off before the prompt shows, so nothing typed after it is echoed.
        if secret { Terminal.enter(.noEcho, fd: fd) }
        writeAll(fd, Array(prompt.utf8))
        defer { if secret { Terminal.restore() } }
        var bytes: [UInt8] = []
        var byte: UInt8 = 0
        while true {
            let count = Glibc.read(fd, &byte, 1)
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { return bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self) }
            if byte == 0x0A { break }
            bytes.append(byte)
        }
        if bytes.last == 0x0D { bytes.removeLast() }
        return String(decoding: bytes, as: UTF8.self)
    }
}
