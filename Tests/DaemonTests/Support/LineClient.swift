import Foundation
import SignupProtocol
import Testing
import UnixIO

#if canImport(Glibc)
import Glibc
#endif

/// A blocking NDJSON client over a real Unix socket, as a third-party client would be.
final class LineClient {
    private(set) var fd: Int32
    /// The protocol's own line splitter; no line the daemon sends comes near its limit.
    private var framer = LineFramer(maxLineBytes: 1 << 26)
    private var lines: [[UInt8]] = []
    /// Every message received so far, in order.
    private(set) var received: [JSONObject] = []

    /// Reads wait 20 s, three times that under a sanitizer (SIGNUPD_TEST_SANITIZER).
    static let defaultTimeout = ProcessInfo.processInfo.environment["SIGNUPD_TEST_SANITIZER"] != nil ? 60 : 20

    init(path: String, timeoutSeconds: Int = LineClient.defaultTimeout) throws {
        fd = try UnixSocket.connect(to: path)
        UnixSocket.setReceiveTimeout(fd, seconds: timeoutSeconds)
    }

    deinit { disconnect() }

    /// Half-closes: the daemon reads the end of the input; the socket still reads.
    func shutdownOutput() {
        guard fd >= 0 else { return }
        shutdown(fd, Int32(SHUT_WR))
    }

    /// Closes the connection now (once: a second close could hit a reused descriptor).
    func disconnect() {
        guard fd >= 0 else { return }
        close(fd)
        fd = -1
    }

    /// Sends raw bytes exactly as given.
    func sendRaw(_ bytes: [UInt8]) throws {
        if let failure = UnixIO.writeAll(fd, bytes) { throw UnixSocket.Failure(description: "write: \(UnixIO.errnoText(failure))") }
    }

    func sendRaw(_ text: String) throws { try sendRaw(Array(text.utf8)) }

    /// Sends one request.
    func send(_ request: Request) throws {
        var writer = JSONWriter()
        request.encode(into: &writer)
        try sendRaw(writer.bytes)
    }

    /// The next line as raw bytes, or nil at end of stream.
    func readLine() throws -> [UInt8]? {
        while true {
            if !lines.isEmpty { return lines.removeFirst() }
            var chunk = [UInt8](repeating: 0, count: 65536)
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count == 0 { return nil }
            guard count > 0 else { throw UnixSocket.Failure(description: "read timed out or failed: errno \(errno)") }
            chunk[..<count].withUnsafeBytes { bytes in
                framer.feed(bytes) { frame in
                    if case .line(let line) = frame { lines.append(Array(line)) }
                }
            }
        }
    }

    /// The next message, parsed.
    func next() throws -> JSONObject {
        guard let line = try readLine() else { throw UnixSocket.Failure(description: "connection closed by the daemon") }
        guard let object = try JSONParser.parse(line).objectValue else { throw UnixSocket.Failure(description: "not an object") }
        // Everything the daemon emits must validate against the published schema.
        let problems = SchemaValidator.protocolV1.problems(.object(object))
        if !problems.isEmpty {
            Issue.record("daemon message violates schema/signup-protocol-v1.schema.json: \(String(decoding: line, as: UTF8.self)) — \(problems)")
        }
        // And read back through the protocol's decoder, as signupctl reads it.
        if (try? ServerEvent.decode(object))?.isUnknown ?? true {
            Issue.record("daemon message does not decode as a ServerEvent: \(String(decoding: line, as: UTF8.self))")
        }
        received.append(object)
        return object
    }

    /// Reads until a message matches; returns it and everything read before it.
    @discardableResult
    func next(where predicate: (JSONObject) -> Bool) throws -> (match: JSONObject, before: [JSONObject]) {
        var before: [JSONObject] = []
        while true {
            let message = try next()
            if predicate(message) { return (message, before) }
            before.append(message)
        }
    }

    /// Reads until the event named `event` (optionally with a member equal to a value).
    @discardableResult
    func next(_ event: String, _ key: String? = nil, _ value: JSONValue? = nil) throws -> JSONObject {
        try next { message in
            message["event"] == .string(event) && (key == nil || message[key!] == value)
        }.match
    }

    /// Sends a ping with a fresh id and returns everything that arrived before its pong:
    /// the daemon answers in order, so this is a synchronisation point.
    func sync() throws -> [JSONObject] {
        let token = "sync-\(UInt32.random(in: 0...UInt32.max))"
        try send(Request(id: .string(token), .ping))
        return try next { $0["event"] == .string("pong") && $0["id"] == .string(token) }.before
    }

    /// Reads the greeting.
    func hello() throws -> JSONObject {
        try next("hello")
    }
}

extension JSONObject {
    var event: String? { self["event"]?.stringValue }
    func string(_ key: String) -> String? { self[key]?.stringValue }
}
