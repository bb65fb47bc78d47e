import SignupProtocol
import UnixIO
#if canImport(Glibc)
import Glibc
#endif

/// Why a call on a signupd connection failed. ``code`` is a stable identifier, the daemon's
/// own error code where it sent one.
public enum SignupClientError: Error, Sendable, Equatable {
    /// No socket could be created (`errno`).
    case socketFailed(errno: Int32)
    /// The path does not fit in a Unix socket address.
    case socketPathTooLong(path: String)
    /// `connect(2)` failed with `errno`: no daemon, permission denied, nobody listening, …
    case connectFailed(path: String, errno: Int32)
    /// The daemon refused the connection at the door (too many connections, shutting down).
    case refusedAtDoor(path: String, SignupServerError)
    /// Whatever listens on the path did not greet with `hello`.
    case notSignupd(path: String)
    /// The daemon speaks a protocol this library does not (`hello`'s `protocol`).
    case unsupportedProtocol(String)
    /// No answer within the time allowed.
    case timeout(seconds: Double)
    /// The daemon sent a line longer than the client takes.
    case lineTooLong(limit: Int)
    /// The daemon sent a line that is not a JSON object.
    case notJSON
    /// Writing to the daemon failed (`errno`): it closed the connection.
    case sendFailed(errno: Int32)
    /// Reading from the daemon failed (`errno`).
    case receiveFailed(errno: Int32)
    /// The connection ended before the answer came.
    indirect case ended(SignupConnectionEnd)
    /// The daemon answered the request with an `error`.
    case refused(SignupServerError)
    /// The daemon answered `request` with something that is not its answer.
    case unexpectedReply(ServerMessage, answering: String)
    /// A session event buffer of the caller's went past its bound (see
    /// ``SignupConnection/Configuration/eventBufferLimit``): the caller stopped reading.
    case eventBufferFull(limit: Int)
    /// The session this call needs is not held (closed, or never opened).
    case noSession
    /// The calling task was cancelled while it waited.
    case cancelled
    /// signupd ended the session itself, saying why (e.g. `idle: no request for 900 seconds`).
    case sessionClosed(reason: String)

    /// A stable identifier: the daemon's code for a refusal, else one of `socket`,
    /// `not_signupd`, `unsupported_protocol`, `timeout`, `protocol_error`, `disconnected`,
    /// `connect_failed`, `slow_consumer`, `no_session`, `cancelled`, `closed`.
    public var code: String {
        switch self {
        case .socketFailed, .socketPathTooLong: "socket"
        case .connectFailed: "connect_failed"
        case .refusedAtDoor(_, let error), .refused(let error): error.code.rawValue
        case .notSignupd: "not_signupd"
        case .unsupportedProtocol: "unsupported_protocol"
        case .timeout: "timeout"
        case .lineTooLong, .notJSON, .unexpectedReply, .receiveFailed: "protocol_error"
        case .sendFailed, .ended: "disconnected"
        case .eventBufferFull: "slow_consumer"
        case .noSession: "no_session"
        case .cancelled: "cancelled"
        case .sessionClosed: "closed"
        }
    }
}

extension SignupClientError {
    /// Whether the connection went away under the call (a drop a resume can mend).
    var isDrop: Bool {
        switch self {
        case .ended(let end): end.isDrop
        case .sendFailed: true
        default: false
        }
    }
}

extension SignupClientError {
    /// Whether signupd may be back in a moment: it could not be reached, turned the
    /// connection away at the door, or the connection went away.
    var isWorthRetrying: Bool {
        switch self {
        case .connectFailed, .refusedAtDoor, .timeout, .sendFailed, .receiveFailed: true
        case .ended(let end): end.isDrop
        default: false
        }
    }
}

/// How a connection to signupd ended.
public enum SignupConnectionEnd: Sendable, Equatable {
    /// The caller closed it.
    case closed
    /// signupd said `bye` (its last line), with its reason: `shutdown`, `idle`, `restarted`, …
    case bye(reason: String)
    /// The connection went away without `bye` (the daemon was killed, a reset, a drop).
    case disconnected
    /// The client gave up on it: the daemon broke the protocol, or a reader fell behind.
    case failed(SignupClientError)

    /// Whether the connection went away without signupd or the caller ending it.
    var isDrop: Bool {
        switch self {
        case .disconnected, .failed(.receiveFailed), .failed(.sendFailed): true
        default: false
        }
    }
}

extension SignupClientError: CustomStringConvertible {
    /// For people: what went wrong, with the system's words for an errno (`code` is the
    /// stable part to match on).
    public var description: String {
        switch self {
        case .socketFailed(let errno): "cannot make a socket: \(UnixIO.errnoText(errno))"
        case .socketPathTooLong(let path): "socket path too long for a Unix socket (at most 107 bytes): \(path)"
        case .connectFailed(let path, let errno) where errno == ENOENT: "no socket at \(path): is signupd running (or socket-activated) there?"
        case .connectFailed(let path, let errno) where errno == ECONNREFUSED: "nothing is listening at \(path) (a stale socket, or not a socket)"
        case .connectFailed(let path, let errno) where errno == EACCES: "permission denied connecting to \(path) (the socket's group decides who may connect)"
        case .connectFailed(let path, let errno): "cannot connect to \(path): \(UnixIO.errnoText(errno))"
        case .refusedAtDoor(let path, let error): "signupd at \(path) refused the connection: \(error.message)"
        case .notSignupd(let path): "\(path) does not speak the signup protocol"
        case .unsupportedProtocol(let name): "the server speaks \(name), which this library does not"
        case .timeout(let seconds): "no answer within \(seconds) s"
        case .lineTooLong(let limit): "the server sent a line longer than \(limit) bytes"
        case .notJSON: "the server sent a line that is not JSON"
        case .sendFailed(let errno): "cannot send to signupd: \(UnixIO.errnoText(errno))"
        case .receiveFailed(let errno): "cannot read from signupd: \(UnixIO.errnoText(errno))"
        case .ended(let end): "the connection ended: \(end)"
        case .refused(let error): error.message
        case .unexpectedReply(_, let answering): "an unexpected reply to \(answering)"
        case .eventBufferFull(let limit): "events were not read: more than \(limit) waiting"
        case .noSession: "no session is open"
        case .cancelled: "cancelled"
        case .sessionClosed(let reason): "the session has ended: \(reason)"
        }
    }
}
