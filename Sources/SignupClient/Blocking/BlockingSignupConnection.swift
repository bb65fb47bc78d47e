import SignupProtocol
import UnixIO

#if canImport(Glibc)
import Glibc
#endif

/// A blocking connection to signupd for command-line tools that wait on a terminal and the
/// daemon together: its ``fd`` can be polled beside their own, and every wait has a timeout.
///
/// Apps and servers use ``SignupConnection`` instead. Both speak through the same pieces:
/// ``ServerMessage`` decoding, ``ServerInfo`` greeting checks and reply matching.
///
/// Failures are ``SignupClientError``s passed through `failure`, so that a tool can throw
/// its own error type (with its own words) from every call.
public final class BlockingSignupConnection<Failure: Error> {
    /// The connected socket.
    public let fd: Int32
    /// The path it was connected to.
    public let path: String
    /// What the daemon said of itself.
    public private(set) var info: ServerInfo
    /// How long each wait may take, in milliseconds.
    public let timeoutMilliseconds: Int32
    /// Lines read and not yet taken, split by the protocol's framer.
    private var framer = LineFramer(maxLineBytes: BlockingSignupConnection.maxLineBytes)
    private var lines: [[UInt8]] = []
    private var lineTooLong = false
    private var writer = JSONWriter()
    private var nextID: Int64 = 0
    private let failure: (SignupClientError) -> Failure

    /// The longest line taken from signupd (a `description` of many forms is the largest it sends).
    public static var maxLineBytes: Int { 16 << 20 }

    /// Connects to `path` and reads the greeting. `failure` turns the library's errors into
    /// the caller's.
    public init(path: String, timeoutSeconds: Double, failure: @escaping (SignupClientError) -> Failure) throws(Failure) {
        self.path = path
        self.failure = failure
        timeoutMilliseconds = Int32(min(timeoutSeconds * 1000, Double(Int32.max)).rounded(.up))
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw failure(.socketFailed(errno: errno)) }
        info = ServerInfo(server: "signupd", protocolName: ServerEvent.protocolName, forms: [], limits: ServerLimits(), hello: JSONObject())
        guard let status = UnixIO.withSocketAddress(path, { connect(fd, $0, $1) }) else {
            close(fd)
            throw failure(.socketPathTooLong(path: path))
        }
        guard status == 0 else {
            let error = errno
            close(fd)
            throw failure(.connectFailed(path: path, errno: error))
        }
        let greeting = try receive()
        do {
            info = try ServerInfo.greeting(greeting, path: path)
        } catch {
            throw failure(error)
        }
    }

    deinit { close(fd) }

    /// A fresh request id.
    public func makeID() -> RequestID {
        nextID += 1
        return .integer(nextID)
    }

    /// Sends one request.
    public func send(_ request: Request) throws(Failure) {
        writer.reset()
        request.encode(into: &writer)
        try sendRaw(writer.bytes)
    }

    /// Sends a request if the socket takes it at once, and forgets it: for a last word on
    /// the way out (a form's `close`), which must neither block nor fail the tool.
    public func sendIfRoom(_ request: Request) {
        writer.reset()
        request.encode(into: &writer)
        let bytes = writer.bytes
        _ = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL)) }
    }

    /// Sends bytes as they are.
    public func sendRaw(_ bytes: [UInt8]) throws(Failure) {
        guard let error = UnixIO.writeAll(fd, bytes) else { return }
        // The daemon closed the connection; if it said why first (`bye`: a stop, a start
        // that failed), that is the failure, not the broken pipe.
        if let reason = byeAlreadySent() { throw failure(.ended(.bye(reason: reason))) }
        throw failure(.sendFailed(errno: error))
    }

    /// The reason of a `bye` the daemon sent before closing, among what it sent and was not
    /// read yet (read without waiting).
    private func byeAlreadySent() -> String? {
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            chunk[..<count].withUnsafeBytes { framer.feed($0, take) }
        }
        for line in lines.reversed() {
            if let message = ServerMessage(line: line), case .bye(let reason) = message.event { return reason }
        }
        return nil
    }

    /// Sends a request with a fresh id and returns the id.
    @discardableResult
    public func request(_ operation: Request.Operation) throws(Failure) -> RequestID {
        let id = makeID()
        try send(Request(id: id, operation))
        return id
    }

    /// The next complete line already read, if any.
    public func bufferedLine() throws(Failure) -> [UInt8]? {
        if lineTooLong { throw failure(.lineTooLong(limit: Self.maxLineBytes)) }
        return lines.isEmpty ? nil : lines.removeFirst()
    }

    /// The next message already read, if any.
    public func bufferedMessage() throws(Failure) -> ServerMessage? {
        guard let line = try bufferedLine() else { return nil }
        guard let message = ServerMessage(line: line) else { throw failure(.notJSON) }
        return message
    }

    /// Reads what is available and splits it into lines; false at end of stream.
    public func fill() throws(Failure) -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count < 0 { throw failure(.receiveFailed(errno: errno)) }
            if count == 0 {
                framer.finish(take)
                return false
            }
            chunk[..<count].withUnsafeBytes { framer.feed($0, take) }
            return true
        }
    }

    private func take(_ frame: LineFramer.Frame) {
        switch frame {
        case .line(let line): lines.append(Array(line))
        case .tooLong: lineTooLong = true
        }
    }

    /// The next message, waiting at most the timeout (or, `waitingForever`, as long as it
    /// takes); nil at end of stream.
    public func nextMessage(waitingForever: Bool = false) throws(Failure) -> ServerMessage? {
        while true {
            if let message = try bufferedMessage() { return message }
            if !waitingForever {
                var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                let ready = poll(&poller, 1, timeoutMilliseconds)
                if ready < 0 && errno == EINTR { continue }
                guard ready > 0 else { throw failure(.timeout(seconds: Double(timeoutMilliseconds) / 1000)) }
            }
            guard try fill() else { return nil }
        }
    }

    /// Hands out what is read but not taken, as it came (for tools that relay bytes).
    public func takeBuffered() -> [UInt8] {
        defer {
            lines.removeAll()
            framer = LineFramer(maxLineBytes: Self.maxLineBytes)
        }
        return lines.flatMap { $0 + [0x0A] } + framer.partial
    }

    /// The next message; the end of the stream and `bye` fail here
    /// (``SignupClientError/ended(_:)``).
    public func receive() throws(Failure) -> ServerMessage {
        guard let message = try nextMessage() else { throw failure(.ended(.disconnected)) }
        if case .bye(let reason) = message.event { throw failure(.ended(.bye(reason: reason))) }
        return message
    }

    /// Reads until the reply to `id` (``ServerMessage/answers(_:)``): its answer, or its
    /// `error` thrown as ``SignupClientError/refused(_:)``. Other messages go to `other`.
    public func reply(to id: RequestID, handling other: (ServerMessage) throws(Failure) -> Void = { _ in }) throws(Failure) -> ServerMessage {
        while true {
            let message = try receive()
            if message.answers(id) {
                if let refusal = message.refusal { throw failure(.refused(refusal)) }
                return message
            }
            try other(message)
        }
    }
}
