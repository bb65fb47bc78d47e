import Foundation
import SignupProtocol
import UnixIO

#if canImport(Glibc)
import Glibc
#endif

/// A tiny signupd stand-in on a Unix socket: it greets each connection, then answers each
/// request line with whatever `script` returns for it and the connection's number (0 for
/// the first accepted; lines without their newline). Each connection on a thread of its
/// own; for what a real daemon never sends (events from a newer version) or does not yet.
final class FakeServer: @unchecked Sendable {
    let path: String
    private let listener: Int32

    static let hello = #"{"event":"hello","protocol":"signup/1","server":"fake/1","forms":["signup"],"limits":{"maxLineBytes":65536,"maxSessionsPerConnection":16,"maxOutputBytes":1048576}}"#

    /// `greeting`: the first line, `hello` unless a test wants another.
    convenience init(greeting: String = FakeServer.hello, script: @escaping @Sendable (_ request: JSONObject) -> [String]) throws {
        try self.init(greeting: greeting) { request, _ in script(request) }
    }

    init(greeting: String = FakeServer.hello, script: @escaping @Sendable (_ request: JSONObject, _ connection: Int) -> [String]) throws {
        path = "\(DaemonProcess.makeDirectory())/fake.sock"
        listener = try UnixSocket.listen(at: path)
        let listener = listener
        Thread.detachNewThread {
            var number = 0
            while true {
                let fd = accept(listener, nil, nil)
                if fd < 0 && errno == EINTR { continue }  // a signal (a test's daemon exiting)
                guard fd >= 0 else { return }  // the listener was closed
                let connection = number
                number += 1
                Thread.detachNewThread { Self.serve(fd, greeting: greeting) { script($0, connection) } }
            }
        }
    }

    private static func serve(_ fd: Int32, greeting: String, script: (JSONObject) -> [String]) {
        // No receive timeout: under the whole suite a client's task may wait for a thread
        // far longer than any bound that would make sense here (its test's time limit bounds it).
        defer { close(fd) }
        UnixIO.writeAll(fd, Array((greeting + "\n").utf8))
        var framer = LineFramer(maxLineBytes: 65536)
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }  // a signal, not the client leaving
            guard count > 0 else { return }
            var requests: [JSONObject] = []
            chunk[..<count].withUnsafeBytes { bytes in
                framer.feed(bytes) { frame in
                    if case .line(let line) = frame, let object = try? JSONParser.parse(Array(line)).objectValue { requests.append(object) }
                }
            }
            for request in requests {
                let answer = script(request).map { $0 + "\n" }.joined()
                UnixIO.writeAll(fd, Array(answer.utf8))
            }
        }
    }

    /// Stops taking connections. Called by the test when it is done (`defer`), never from
    /// `deinit`: Swift may release a server after its last use, before its client's connection
    /// was accepted, and closing the listener then resets that connection.
    func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }
}

extension JSONObject {
    /// The request's id as JSON text, for a scripted answer.
    var idText: String {
        switch self["id"] {
        case .number(let number)?: number
        case .string(let text)?: "\"\(text)\""
        default: "null"
        }
    }
}
