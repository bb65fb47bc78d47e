import ArgumentParser
import SignupClient

#if canImport(Glibc)
import Glibc
#endif

/// Options every subcommand takes: which daemon, how long to wait, and the output format.
/// They may also come before the subcommand (`signupctl --socket X ping`): see
/// `ArgumentNormalizer`.
struct ConnectionOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp(
        "signupd's socket. Default: $SIGNUPD_SOCKET, else $XDG_RUNTIME_DIR/signupd.sock if it exists, else /run/signupd/signupd.sock.",
        valueName: "path"), completion: .file())
    var socket: String?

    @Flag(name: .long, help: "Print one JSON object on standard output, success or failure (see JSON OUTPUT).")
    var json = false

    // Unconditional: `--timeout -1` is a bad value, not a missing one.
    @Option(name: .long, parsing: .unconditional, help: ArgumentHelp("Seconds to wait for any answer from the daemon.", valueName: "seconds"))
    var timeout: Double = 30

    /// The socket path to use, following the documented order.
    var socketPath: String { socket ?? SocketPath.default }

    func connect() throws(CommandFailure) -> DaemonConnection {
        try DaemonConnection(path: socketPath, timeoutSeconds: timeout, failure: CommandFailure.init)
    }

    func validate() throws {
        guard timeout > 0, timeout.isFinite else { throw ValidationError(Say.pick("--timeout must be a positive number of seconds, not \(timeout)", "--timeout 必须是正的秒数，而不是 \(timeout)")) }
        if let socket, socket.isEmpty { throw ValidationError(Say.pick("--socket needs a path", "--socket 需要一个路径")) }
    }
}

extension ConnectionOptions {
    /// The defaults, for shell completion (which sees no parsed options): $SIGNUPD_SOCKET
    /// and the standard paths, with a short timeout.
    static func fromEnvironment() throws -> ConnectionOptions {
        try ConnectionOptions.parse(["--timeout", "2"])
    }
}
