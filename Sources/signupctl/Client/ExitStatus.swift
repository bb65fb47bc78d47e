import ArgumentParser
import SignupClient

/// signupctl's documented exit codes (README.md, "Exit codes").
enum ExitStatus: Int32 {
    /// It worked.
    case success = 0
    /// The daemon said no: the signup or login result was not ok, or the token is invalid.
    case refused = 1
    /// The form cannot be submitted: a field failed validation (e.g. name taken, password too short).
    case invalidInput = 2
    /// The daemon cannot be reached: no socket, connection refused, permission denied.
    case unreachable = 3
    /// The conversation broke: timeout, unexpected reply, or the daemon closed the connection.
    case protocolError = 4
    /// The account store is unavailable (e.g. PostgreSQL down): nothing was decided, try
    /// again later (sysexits EX_TEMPFAIL).
    case unavailable = 75
    /// Bad usage: unknown command or option, a missing or invalid argument (sysexits EX_USAGE).
    case usage = 64
    /// The interactive form was left with Esc or Ctrl-C (128 + SIGINT, as shells report it).
    case cancelled = 130

    var code: ExitCode { ExitCode(rawValue) }

    /// The `error.code` of the JSON envelope when nothing more precise is known.
    var defaultCode: String {
        switch self {
        case .success: "ok"
        case .refused: "refused"
        case .invalidInput: "invalid_input"
        case .unreachable: "unreachable"
        case .protocolError: "protocol_error"
        case .unavailable: "unavailable"
        case .usage: "usage"
        case .cancelled: "cancelled"
        }
    }
}

/// A failure that ends the command with a one-line reason and its exit status. `code` is
/// the stable identifier `--json` reports (a protocol error code when the daemon sent one).
struct CommandFailure: Error, CustomStringConvertible {
    let status: ExitStatus
    let code: String
    let description: String
    /// The daemon's message id (e.g. `store.unavailable`) when the failure came from one.
    var messageId: String?

    init(_ status: ExitStatus, _ description: String, code: String? = nil, messageId: String? = nil) {
        self.status = status
        self.code = code ?? status.defaultCode
        self.description = description
        self.messageId = messageId
    }

    /// The message ids that mean "signupd cannot decide now, try again later" rather than a
    /// decision about the input: the account store, the availability service, or phone
    /// numbers that cannot be checked (helper-30: `phone.unavailable` exited 2, as if the
    /// number were wrong).
    static let unavailableMessageIds: Set<String> = ["store.unavailable", "availability.unreachable", "phone.unavailable"]
}

extension CommandFailure {
    /// signupd ended the form itself (`closed` with a reason: left alone too long).
    static func formClosed(_ reason: String) -> CommandFailure {
        CommandFailure(.protocolError, Say.pick("signupd closed the form: \(reason)", "表单已被服务关闭：\(Say.closedReason(reason))"), code: "closed")
    }

    /// signupd answered a request with an event that is not its answer.
    static func unexpected(_ received: Received, answering request: String) -> CommandFailure {
        CommandFailure(.protocolError, "signupd answered \(request) with \(RawLine.text(of: received.members))")
    }
}
