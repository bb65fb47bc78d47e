import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A spawned child's pid, valid until the child is reaped. Signals and the reap go through
/// one lock, so a signal sent late (the lifetime bound) reaches this child or nobody —
/// never a process that reused the pid after the reap.
final class ChildProcess: @unchecked Sendable {
    private let lock = NSLock()
    /// The pid while the child is unreaped.
    private var live: pid_t?

    init(_ pid: pid_t) {
        live = pid
    }

    /// Sends `signal` unless the child has been reaped.
    func signal(_ signal: Int32) {
        lock.withLock {
            if let live { kill(live, signal) }
        }
    }

    /// Waits for the child to exit and reaps it; returns the exit code (128+n for signal
    /// n), or nil when it was reaped already.
    func waitAndReap() -> Int32? {
        guard let pid = lock.withLock({ live }) else { return nil }
        // Wait without reaping: until the reap below, the pid stays this child's.
        var info = siginfo_t()
        while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) < 0 && errno == EINTR {}
        return lock.withLock {
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
            live = nil
            return (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        }
    }
}
