import SignupClient
import SignupProtocol
import UnixIO

/// signupctl's connection: the client library's blocking one, failing with signupctl's words.
typealias DaemonConnection = BlockingSignupConnection<CommandFailure>
/// A form session driven by signupctl.
typealias FormClient = BlockingSignupForm<CommandFailure>
/// The client's picture of a session (the library's `FormState`).
typealias SessionView = FormState
/// One line from signupd, decoded by the library.
typealias Received = ServerMessage

extension FormState {
    typealias Result = FormResult
    typealias FieldState = FieldValidation
}

extension CommandFailure {
    /// What a failure of the client library means to signupctl's user: its exit status,
    /// its text (English or Chinese) and its JSON code.
    init(_ error: SignupClientError) {
        switch error {
        case .socketFailed(let code):
            self.init(.unreachable, Say.pick("cannot create a socket: \(UnixIO.errnoText(code))", "无法创建套接字：\(UnixIO.errnoText(code))"))
        case .socketPathTooLong(let path):
            self.init(.unreachable, Say.pick("socket path too long: \(path)", "套接字路径过长：\(path)"))
        case .connectFailed(let path, let code):
            self = ConnectDiagnosis.failure(path: path, errno: code)
        case .refusedAtDoor(let path, let refusal):
            // Refused at the door (too many connections, shutting down): the daemon is there
            // but will not serve us now, which is "cannot be reached" (exit 3), with its code.
            let code = refusal.code.rawValue
            self.init(.unreachable, Say.pick("signupd at \(path) refused the connection: \(refusal.message) (\(code))", "\(path) 处的服务拒绝了连接：\(Say.refusal(code))"), code: code)
        case .notSignupd(let path):
            self.init(.protocolError, Say.pick("\(path) did not greet with hello; is it signupd?", "\(path) 上的程序没有按注册服务的协议应答：它可能不是注册服务"), code: "not_signupd")
        case .unsupportedProtocol(let spoken):
            self.init(.protocolError, Say.pick("unsupported protocol \(spoken); this signupctl speaks signup/1", "不支持的协议版本 \(spoken)"))
        case .timeout(let seconds):
            // A connection systemd accepted for a service that cannot start waits in the
            // socket's queue: say where to look, not only that time ran out.
            self.init(.protocolError, Say.pick(
                "signupd did not answer within \(seconds) s (busy, or unable to start: see systemctl status signupd and journalctl -u signupd)",
                "服务在 \(seconds) 秒内没有应答（可能繁忙或无法启动：请查看 `systemctl status signupd` 和 `journalctl -u signupd`）"), code: "timeout")
        case .lineTooLong(let limit):
            self.init(.protocolError, Say.pick("signupd sent a line longer than \(limit) bytes", "服务发来的一行超过 \(limit) 字节"))
        case .notJSON:
            self.init(.protocolError, Say.pick("signupd sent a line that is not a JSON object", "服务发来的一行不是有效的消息"))
        case .sendFailed(let code):
            self.init(.protocolError, Say.pick("signupd closed the connection: \(UnixIO.errnoText(code))", "服务关闭了连接：\(UnixIO.errnoText(code))"))
        case .receiveFailed(let code):
            self.init(.protocolError, Say.pick("reading from signupd: \(UnixIO.errnoText(code))", "读取服务应答失败：\(UnixIO.errnoText(code))"))
        case .ended(.bye(let reason)) where reason == ServerEvent.startFailedReason:
            // Greeted by a start that then failed (PROTOCOL.md, `bye`): it cannot serve, and
            // its journal says why.
            self.init(.unreachable, Say.pick(
                "signupd could not start (see systemctl status signupd and journalctl -u signupd)",
                "服务无法启动（请查看 `systemctl status signupd` 和 `journalctl -u signupd`）"), code: "start_failed")
        case .ended(.bye(let reason)):
            self.init(.protocolError, Say.pick("signupd closed the connection: \(reason)", "服务关闭了连接：\(Say.byeReason(reason))"))
        case .ended:
            self.init(.protocolError, Say.pick("signupd closed the connection", "服务关闭了连接"))
        case .refused(let refusal):
            self.init(refusal)
        case .unexpectedReply(let message, let request):
            self = .unexpected(message, answering: request)
        case .sessionClosed(let reason):
            self = .formClosed(reason)
        case .eventBufferFull, .noSession, .cancelled:
            // The async connection's; signupctl's blocking one never fails so.
            self.init(.protocolError, "\(error)")
        }
    }

    /// The failure an `error` event stands for.
    init(_ refusal: SignupServerError) {
        guard let code = refusal.code.known else {
            // A code this signupctl does not know (a newer daemon's) is a protocol error.
            self.init(.protocolError, Say.pick("\(refusal.message) (\(refusal.code.rawValue))", Say.refusal(refusal.code.rawValue)), code: refusal.code.rawValue)
            return
        }
        let status: ExitStatus = switch code {
        case .invalidToken, .notReady, .finished, .rateLimited, .shuttingDown, .forbidden, .unknownSession: .refused
        case .storeUnavailable: .unavailable
        default: .protocolError
        }
        self.init(status, Say.pick("\(refusal.message) (\(code.rawValue))", Say.refusal(code.rawValue)), code: status == .unavailable ? ExitStatus.unavailable.defaultCode : code.rawValue)
    }
}
