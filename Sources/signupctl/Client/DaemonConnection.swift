import Protocol
import UnixIO

#if canImport(Glibc)
import Glibc
#endif

/// A blocking NDJSON connection to signupd, with a timeout on every wait.
final class DaemonConnection {
    let fd: Int32
    let path: String
    private var buffer: [UInt8] = []
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
        guard fd >= 0 else { throw CommandFailure(.unreachable, "cannot create a socket: \(UnixIO.errnoText())") }
        guard let status = UnixIO.withSocketAddress(path, { connect(fd, $0, $1) }) else {
            close(fd)
            throw CommandFailure(.unreachable, "socket path too long: \(path)")
        }
        guard status == 0 else {
            let error = errno
            close(fd)
            throw ConnectDiagnosis.failure(path: path, errno: error)
        }
        let greeting = try receive()
        switch Result(catching: { () throws(ServerEventDecodingError) in try ServerEvent.decode(greeting) }) {
        case .success(.error(let code, let message, _, _)):
            // Refused at the door (too many connections, shutting down): the daemon is there
            // but will not serve us now, which is "cannot be reached" (exit 3), with its code.
            throw CommandFailure(.unreachable, "signupd at \(path) refused the connection: \(message) (\(code.rawValue))", code: code.rawValue)
        case .failure(.unknownErrorCode(let code, let message)):
            throw CommandFailure(.unreachable, "signupd at \(path) refused the connection: \(message) (\(code))", code: code)
        case .success(.hello(let name, _, _)): server = name
        // A hello missing members this command does not need still greets.
        case .failure(.invalidMember(event: "hello", _)): server = greeting["server"]?.stringValue ?? server
        default:
            throw CommandFailure(.protocolError, "\(path) did not greet with hello; is it signupd?", code: "not_signupd")
        }
        // hello's decoding ignores the version it names; this client speaks signup/1 only.
        let named = greeting["protocol"]?.stringValue ?? "?"
        guard named.hasPrefix("signup/1") else {
            throw CommandFailure(.protocolError, "unsupported protocol \(named); this signupctl speaks signup/1")
        }
        protocolName = named
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
            throw CommandFailure(.protocolError, "signupd closed the connection: \(UnixIO.errnoText(failure))")
        }
    }

    /// Sends a request with a fresh id and returns the id.
    @discardableResult
    func request(_ operation: Request.Operation) throws(CommandFailure) -> RequestID {
        let id = makeID()
        try send(Request(id: id, operation))
        return id
    }

    /// A complete line already buffered, if any.
    func bufferedLine() -> [UInt8]? {
        guard let newline = buffer.firstIndex(of: 0x0A) else { return nil }
        let line = Array(buffer[..<newline])
        buffer.removeSubrange(...newline)
        return line
    }

    /// Reads what is available into the buffer; false at end of stream.
    func fill() throws(CommandFailure) -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count < 0 { throw CommandFailure(.protocolError, "reading from signupd: \(UnixIO.errnoText())") }
            if count == 0 { return false }
            buffer.append(contentsOf: chunk[..<count])
            return true
        }
    }

    /// The next line, waiting at most the timeout; nil at end of stream.
    func receiveLine() throws(CommandFailure) -> [UInt8]? {
        while true {
            if let line = bufferedLine() { return line }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, timeoutMilliseconds)
            if ready < 0 && errno == EINTR { continue }
            guard ready > 0 else {
                throw CommandFailure(.protocolError, "signupd did not answer within \(Double(timeoutMilliseconds) / 1000) s", code: "timeout")
            }
            guard try fill() else { return nil }
        }
    }

    /// The next line, waiting as long as it takes; nil at end of stream.
    func receiveLineWithoutTimeout() throws(CommandFailure) -> [UInt8]? {
        while true {
            if let line = bufferedLine() { return line }
            guard try fill() else { return nil }
        }
    }

    /// Hands out what is buffered (for `raw`, which relays bytes untouched).
    func takeBuffered() -> [UInt8] {
        defer { buffer.removeAll() }
        return buffer
    }

    /// The next message, parsed; the end of the stream is an error here.
    func receive() throws(CommandFailure) -> JSONObject {
        guard let line = try receiveLine() else { throw CommandFailure(.protocolError, "signupd closed the connection") }
        guard let object = try? JSONParser.parse(line).objectValue else {
            throw CommandFailure(.protocolError, "signupd sent a line that is not a JSON object")
        }
        if case .bye(let reason) = try? ServerEvent.decode(object) {
            throw CommandFailure(.protocolError, "signupd closed the connection: \(reason)")
        }
        return object
    }

    /// Reads until the reply to `id`: its direct answer or its error.
    func reply(to id: RequestID, handling other: (JSONObject) throws(CommandFailure) -> Void = { _ in }) throws(CommandFailure) -> JSONObject {
        while true {
            let message = try receive()
            // Validations a request causes carry its id too; its reply is the other event.
            if let event = try? ServerEvent.decode(message), event.id == id, !event.isValidation {
                if case .error = event { throw CommandFailure.fromError(message) }
                return message
            }
            try other(message)
        }
    }
}

extension RequestID {
    var jsonValue: JSONValue {
        switch self {
        case .string(let s): .string(s)
        case .integer(let i): .number(String(i))
        }
    }
}

extension ServerEvent {
    /// A field's validation, which a `set` causes besides its direct reply.
    var isValidation: Bool {
        if case .session(_, _, .validation, _) = self { true } else { false }
    }

    /// An `error` event in `message`: its code (one this signupctl knows, or a newer
    /// daemon's) and text; nil for any other message.
    static func refusal(in message: JSONObject) -> (code: String, text: String)? {
        switch Result(catching: { () throws(ServerEventDecodingError) in try decode(message) }) {
        case .success(.error(let code, let text, _, _)): (code.rawValue, text)
        case .failure(.unknownErrorCode(let code, let text)): (code, text)
        default: nil
        }
    }

    /// A session's `result`.
    var isResult: Bool {
        if case .session(_, _, .result, _) = self { true } else { false }
    }
}

extension CommandFailure {
    /// The failure an `error` event stands for.
    static func fromError(_ message: JSONObject) -> CommandFailure {
        switch Result(catching: { () throws(ServerEventDecodingError) in try ServerEvent.decode(message) }) {
        case .success(.error(let code, let text, _, _)):
            let status: ExitStatus = switch code {
            case .invalidToken, .notReady, .finished, .rateLimited, .shuttingDown, .forbidden, .unknownSession: .refused
            case .storeUnavailable: .unavailable
            default: .protocolError
            }
            return CommandFailure(status, "\(text) (\(code.rawValue))", code: status == .unavailable ? ExitStatus.unavailable.defaultCode : code.rawValue)
        case .failure(.unknownErrorCode(let code, let text)):
            // A code this signupctl does not know (a newer daemon's) is a protocol error.
            return CommandFailure(.protocolError, "\(text) (\(code))", code: code)
        default:
            return CommandFailure(.protocolError, "signupd sent a malformed error", code: "unknown")
        }
    }
}
