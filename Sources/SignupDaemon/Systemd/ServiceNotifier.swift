import CSystemd

#if canImport(Glibc)
import Glibc
#endif

/// Talks to the service manager through `$NOTIFY_SOCKET` (a no-op when run by hand).
struct ServiceNotifier: Sendable {
    let enabled: Bool

    init() {
        enabled = getenv("NOTIFY_SOCKET") != nil
    }

    func ready(status: String) { send("READY=1\nSTATUS=\(status)") }
    func status(_ status: String) { send("STATUS=\(status)") }
    func watchdog() { send("WATCHDOG=1") }
    func stopping(status: String) { send("STOPPING=1\nSTATUS=\(status)") }
    /// A reload starts (`Type=notify-reload`): systemd wants CLOCK_MONOTONIC's time of it.
    func reloading() {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        send("RELOADING=1\nSTATUS=reloading forms\nMONOTONIC_USEC=\(UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1000)")
    }
    /// A reload is over, applied or refused.
    func readyAgain() { send("READY=1") }

    /// The watchdog interval systemd asked for (`WatchdogSec=`), if any.
    var watchdogInterval: Duration? {
        var usec: UInt64 = 0
        guard sd_watchdog_enabled(0, &usec) > 0, usec > 0 else { return nil }
        return .microseconds(Int64(usec))
    }

    private func send(_ state: String) {
        guard enabled else { return }
        _ = sd_notify(0, state)
    }
}
