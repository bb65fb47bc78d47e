import ArgumentParser
import UnixIO

#if canImport(Glibc)
import Glibc
#endif

/// How a command ends when it fails: a one-line reason on stderr, the JSON envelope on
/// stdout under `--json`, then the documented exit status.
enum Report {
    /// Set once by `main` after parsing, before any command runs.
    nonisolated(unsafe) static var command = "signupctl"
    nonisolated(unsafe) static var json = false

    static func fail(_ failure: CommandFailure) -> Never {
        if json { JSONEnvelope.emitFailure(failure, command: command) }
        let line = "signupctl: \(failure.description)\n"
        fflush(nil)
        UnixIO.writeAll(2, Array(line.utf8))
        exit(failure.status.rawValue)
    }

}

/// A command whose body ends, when it throws, through `Report.fail` (the reason, the JSON
/// envelope under --json, the documented exit status).
protocol FailingCommand: ParsableCommand {
    func body() throws(CommandFailure)
}

extension FailingCommand {
    func run() {
        do { try body() } catch { Report.fail(error) }
    }
}
