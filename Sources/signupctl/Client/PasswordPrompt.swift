import UnixIO

#if canImport(Glibc)
import Glibc
#endif

/// Line prompts on the controlling terminal, read key by key with signupctl's own echo
/// (restored by `Terminal`, also from a signal): a secret is never echoed, Tab ends a
/// field as Enter does (a password manager's auto-type types `user<Tab>password<Enter>`),
/// Ctrl-C cancels like Esc in the full-screen form (no SIGINT: the caller prints its
/// cancelled envelope and exits 130), Ctrl-D on an empty line is end of input.
enum PasswordPrompt {
    enum Answer: Equatable {
        case text(String)
        /// Ctrl-C.
        case interrupted
        /// Ctrl-D on an empty line, or the terminal went away.
        case endOfInput
    }

    /// Reads one field from `fd` after writing `prompt` to it.
    static func read(_ prompt: String, fd: Int32, secret: Bool) -> Answer {
        // Echo goes off before the prompt shows, so nothing typed after it is echoed by the tty.
        Terminal.enter(.lineByKey, fd: fd)
        defer { Terminal.restore() }  // ends the line
        UnixIO.writeAll(fd, Array(prompt.utf8))
        var line = LineInput(secret: secret)
        var byte: UInt8 = 0
        while true {
            let count = Glibc.read(fd, &byte, 1)
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { return line.text.isEmpty ? .endOfInput : .text(line.text) }
            let step = line.feed(byte)
            if !step.echo.isEmpty { UnixIO.writeAll(fd, Array(step.echo.utf8)) }
            if let answer = step.answer { return answer }
        }
    }
}

/// The editing of one prompted line, byte by byte: what to echo and when the line ends.
struct LineInput {
    let secret: Bool
    private var bytes: [UInt8] = []
    /// Inside an escape sequence (arrow keys and the like, which mean nothing here).
    private var escape = 0

    init(secret: Bool) { self.secret = secret }

    var text: String { String(decoding: bytes, as: UTF8.self) }

    mutating func feed(_ byte: UInt8) -> (echo: String, answer: PasswordPrompt.Answer?) {
        if escape > 0 {
            // ESC [ … final byte (0x40–0x7E), or ESC and one byte.
            if escape == 1 && byte != UInt8(ascii: "[") && byte != UInt8(ascii: "O") { escape = 0 } else if escape > 1 && (0x40...0x7E).contains(byte) { escape = 0 } else { escape += 1 }
            return ("", nil)
        }
        switch byte {
        case 0x0D, 0x0A, 0x09: return ("", .text(text))
        case 0x03: return ("", .interrupted)
        case 0x04: return bytes.isEmpty ? ("", .endOfInput) : ("", nil)
        case 0x1B:
            escape = 1
            return ("", nil)
        case 0x7F, 0x08:
            guard !bytes.isEmpty else { return ("", nil) }
            while let last = bytes.popLast(), last & 0xC0 == 0x80 {}
            return (secret ? "" : "\u{08} \u{08}", nil)
        case 0x15:
            let erase = secret ? "" : String(repeating: "\u{08} \u{08}", count: text.count)
            bytes.removeAll()
            return (erase, nil)
        case 0..<0x20: return ("", nil)
        default:
            bytes.append(byte)
            if secret { return ("", nil) }
            // Echo a character once it is complete.
            let lead = bytes.lastIndex { $0 & 0xC0 != 0x80 } ?? 0
            let tail = Array(bytes[lead...])
            let needed = tail[0] < 0x80 ? 1 : tail[0] >= 0xF0 ? 4 : tail[0] >= 0xE0 ? 3 : 2
            return (tail.count == needed ? String(decoding: tail, as: UTF8.self) : "", nil)
        }
    }
}
