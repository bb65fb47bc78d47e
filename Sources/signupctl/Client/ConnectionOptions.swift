import ArgumentParser

#if canImport(Glibc)
import Glibc
#endif

/// Options every subcommand takes: which daemon, how long to wait, and the output format.
struct ConnectionOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp(
        "signupd's socket. Default: $SIGNUPD_SOCKET, else $XDG_RUNTIME_DIR/signupd.sock if it exists, else /run/signupd/signupd.sock.",
        valueName: "path"))
    var socket: String?

    @Flag(name: .long, help: "Print machine-readable JSON instead of text.")
    var json = false

    @Option(name: .long, help: ArgumentHelp("Seconds to wait for any answer from the daemon.", valueName: "seconds"))
    var timeout: Double = 30

    /// The socket path to use, following the documented order.
    var socketPath: String {
        if let socket { return socket }
        if let value = getenv("SIGNUPD_SOCKET"), value.pointee != 0 { return String(cString: value) }
        if let runtime = getenv("XDG_RUNTIME_DIR"), runtime.pointee != 0 {
            let candidate = "\(String(cString: runtime))/signupd.sock"
            if access(candidate, F_OK) == 0 { return candidate }
        }
        return "/run/signupd/signupd.sock"
    }

    func connect() throws(CommandFailure) -> DaemonConnection {
        try DaemonConnection(path: socketPath, timeoutSeconds: timeout)
    }

    func validate() throws {
        guard timeout > 0 else { throw ValidationError("--timeout must be positive") }
    }
}
