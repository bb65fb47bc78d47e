import ArgumentParser

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

    var code: ExitCode { ExitCode(rawValue) }
}

/// A failure that ends the command with a one-line reason and its exit status.
struct CommandFailure: Error, CustomStringConvertible {
    let status: ExitStatus
    let description: String

    init(_ status: ExitStatus, _ description: String) {
        self.status = status
        self.description = description
    }
}
