import SignupProtocol
import Testing

@Suite("Line framing")
struct LineFramerTests {
    private enum Out: Equatable { case line(String), tooLong }

    private func frame(_ chunks: [String], max: Int = 16) -> [Out] {
        var framer = LineFramer(maxLineBytes: max)
        var out: [Out] = []
        for chunk in chunks {
            Array(chunk.utf8).withUnsafeBytes { raw in
                framer.feed(raw) { frame in
                    switch frame {
                    case .line(let bytes): out.append(.line(String(decoding: bytes, as: UTF8.self)))
                    case .tooLong: out.append(.tooLong)
                    }
                }
            }
        }
        return out
    }

    @Test("lines split across and within chunks; CRLF accepted")
    func splitting() {
        #expect(frame(["a\nb", "c\r\n", "\n", "d"]) == [.line("a"), .line("bc"), .line("")])
    }

    @Test("a line at the limit passes, one byte more is too long and discarded to its end")
    func limit() {
        let at = String(repeating: "x", count: 16)
        #expect(frame([at + "\n"]) == [.line(at)])
        #expect(frame([at + "\r\n"]) == [.line(at)])
        #expect(frame([at + "x\nok\n"]) == [.tooLong, .line("ok")])
        #expect(frame([at, "xxxxx", "yyyy", "\nok\n"]) == [.tooLong, .line("ok")])
        #expect(frame([String(repeating: "z", count: 40), "\n", "ok\n"]) == [.tooLong, .line("ok")])
    }

    @Test("a lone CR stays inside the line")
    func loneCR() {
        #expect(frame(["a\rb\n"]) == [.line("a\rb")])
    }
}
