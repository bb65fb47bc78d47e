import SignupProtocol
import UnixIO

#if canImport(Glibc)
import Glibc
#endif

/// A blocking NDJSON connection to signupd, with a timeout on every wait.
final class DaemonConnection {
    let fd: Int32
    let path: String
    /// Lines read and not yet taken, split by the protocol's framer.
    private var framer = LineFramer(maxLineBytes: DaemonConnection.maxLineBytes)
    private var lines: [[UInt8]] = []
    private var lineTooLong = false
    private var writer = JSONWriter()
    let timeoutMilliseconds: Int32
    private var nextID: Int64 = 0
    /// The `hello` the daemon greeted us with, as sent (for `raw`).
    private(set) var hello = JSONObject()
    /// The daemon's name and version from its `hello`, e.g. `signupd/1.0.0`.
    private(set) var server = "signupd"
    /// The protocol its `hello` names, e.g. `signup/1`.
    private(set) var protocolName = "signup/1"

    init(path: String, timeoutSeconds: Double) throws(CommandFailure) {
        self.path = path
        timeoutMilliseconds = Int32(min(timeoutSeconds * 1000, Double(Int32.max)).rounded(.up))
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw CommandFailure(.unreachable, Say.pick("cannot create a socket: \(UnixIO.errnoText())", "无法创建套接字：\(UnixIO.errnoText())")) }
        guard let status = UnixIO.withSocketAddress(path, { connect(fd, $0, $1) }) else {
            close(fd)
            throw CommandFailure(.unreachable, Say.pick("socket path too long: \(path)", "套接字路径过长：\(path)"))
        }
        guard status == 0 else {
            let error = errno
            close(fd)
            throw ConnectDiagnosis.failure(path: path, errno: error)
        }
        let greeting = try receive().message
        switch Result(catching: { () throws(ServerEventDecodingError) in try ServerEvent.decode(greeting) }) {
        case .success(.error(let code, let message, _, _)):
            // Refused at the door (too many connections, shutting down): the daemon is there
            // but will not serve us now, which is "cannot be reached" (exit 3), with its code.
            throw CommandFailure(.unreachable, Say.pick("signupd at \(path) refused the connection: \(message) (\(code.rawValue))", "\(path) 处的服务拒绝了连接：\(Say.refusal(code.rawValue))"), code: code.rawValue)
        case .failure(.unknownErrorCode(let code, let message)):
            throw CommandFailure(.unreachable, Say.pick("signupd at \(path) refused the connection: \(message) (\(code))", "\(path) 处的服务拒绝了连接：\(Say.refusal(code))"), code: code)
        case .success(.hello(let name, _, _, let spoken)):
            server = name
            protocolName = spoken
        default:
            throw CommandFailure(.protocolError, Say.pick("\(path) did not greet with hello; is it signupd?", "\(path) 上的程序没有按注册服务的协议应答：它可能不是注册服务"), code: "not_signupd")
        }
        // Decoding takes any version it is told; this client speaks signup/1 only.
        guard protocolName.hasPrefix("signup/1") else {
            throw CommandFailure(.protocolError, Say.pick("unsupported protocol \(protocolName); this signupctl speaks signup/1", "不支持的协议版本 \(protocolName)"))
        }
        hello = greeting
    }

    deinit { close(fd) }

    /// A fresh request id.
    func makeID() -> RequestID {
        nextID += 1
        return .integer(nextID)
    }

    /// Sends one request.
    func send(_ request: Request) throws(CommandFailure) {
        writer.reset()
        request.encode(into: &writer)
        try sendRaw(writer.bytes)
    }

    func sendRaw(_ bytes: [UInt8]) throws(CommandFailure) {
        if let failure = UnixIO.writeAll(fd, bytes) {
            throw CommandFailure(.protocolError, Say.pick("signupd closed the connection: \(UnixIO.errnoText(failure))", "服务关闭了连接：\(UnixIO.errnoText(failure))"))
        }
    }

    /// Sends a request with a fresh id and returns the id.
    @discardableResult
    func request(_ operation: Request.Operation) throws(CommandFailure) -> RequestID {
        let id = makeID()
        try send(Request(id: id, operation))
        return id
    }

    /// The longest line signupctl takes from signupd (a `description` of many forms is the
    /// largest it sends).
    static let maxLineBytes = 16 << 20

    /// The next complete line already read, if any.
    func bufferedLine() throws(CommandFailure) -> [UInt8]? {
        if lineTooLong { throw CommandFailure(.protocolError, Say.pick("signupd sent a line longer than \(Self.maxLineBytes) bytes", "服务发来的一行超过 \(Self.maxLineBytes) 字节")) }
        return lines.isEmpty ? nil : lines.removeFirst()
    }

    /// The next message already read, if any.
    func bufferedMessage() throws(CommandFailure) -> Received? {
        try bufferedLine().map { line throws(CommandFailure) in try Self.parse(line) }
    }

    /// Reads what is available and splits it into lines (the protocol's `LineFramer`);
    /// false at end of stream.
    func fill() throws(CommandFailure) -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count < 0 { throw CommandFailure(.protocolError, Say.pick("reading from signupd: \(UnixIO.errnoText())", "读取服务应答失败：\(UnixIO.errnoText())")) }
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
    func nextMessage(waitingForever: Bool = false) throws(CommandFailure) -> Received? {
        while true {
            if let message = try bufferedMessage() { return message }
            if !waitingForever {
                var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                let ready = poll(&poller, 1, timeoutMilliseconds)
                if ready < 0 && errno == EINTR { continue }
                guard ready > 0 else {
                    throw CommandFailure(.protocolError, Say.pick("signupd did not answer within \(Double(timeoutMilliseconds) / 1000) s", "服务在 \(Double(timeoutMilliseconds) / 1000) 秒内没有应答"), code: "timeout")
                }
            }
            guard try fill() else { return nil }
        }
    }

    /// Hands out what is read but not taken, as it came (for `raw`, which relays bytes).
    func takeBuffered() -> [UInt8] {
        defer {
            lines.removeAll()
            framer = LineFramer(maxLineBytes: Self.maxLineBytes)
        }
        return lines.flatMap { $0 + [0x0A] } + framer.partial
    }

    /// The next message; the end of the stream and `bye` are errors here.
    func receive() throws(CommandFailure) -> Received {
        guard let received = try nextMessage() else { throw CommandFailure(.protocolError, Say.pick("signupd closed the connection", "服务关闭了连接")) }
        if case .bye(let reason)? = received.event {
            throw CommandFailure(.protocolError, Say.pick("signupd closed the connection: \(reason)", "服务关闭了连接：\(Say.byeReason(reason))"))
        }
        return received
    }

    /// Reads until the reply to `id`: its answer, or its `error` thrown as the failure it
    /// stands for. Other messages go to `other`.
    func reply(to id: RequestID, handling other: (Received) throws(CommandFailure) -> Void = { _ in }) throws(CommandFailure) -> Received {
        while true {
            let received = try receive()
            // Validations a request causes carry its id too; its reply is the other event.
            if received.id == id, !received.isValidation {
                if let refusal = received.refusal { throw CommandFailure(refusal) }
                if received.event != nil { return received }
            }
            try other(received)
        }
    }

    /// A line as a message.
    private static func parse(_ line: [UInt8]) throws(CommandFailure) -> Received {
        guard let object = try? JSONParser.parse(line).objectValue else {
            throw CommandFailure(.protocolError, Say.pick("signupd sent a line that is not a JSON object", "服务发来的一行不是有效的消息"))
        }
        return Received(object)
    }
}

extension CommandFailure {
    /// The failure an `error` event stands for.
    init(_ refusal: Received.Refusal) {
        guard let code = refusal.code else {
            // A code this signupctl does not know (a newer daemon's) is a protocol error.
            self.init(.protocolError, Say.pick("\(refusal.text) (\(refusal.codeText))", Say.refusal(refusal.codeText)), code: refusal.codeText)
            return
        }
        let status: ExitStatus = switch code {
        case .invalidToken, .notReady, .finished, .rateLimited, .shuttingDown, .forbidden, .unknownSession: .refused
        case .storeUnavailable: .unavailable
        default: .protocolError
        }
        self.init(status, Say.pick("\(refusal.text) (\(code.rawValue))", Say.refusal(code.rawValue)), code: status == .unavailable ? ExitStatus.unavailable.defaultCode : code.rawValue)
    }
}
