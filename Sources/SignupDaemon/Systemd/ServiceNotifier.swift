import CSystemd
import Dispatch
import FormEngine
import NIOConcurrencyHelpers

#if canImport(Glibc)
import Glibc
#endif

/// Talks to the service manager through `$NOTIFY_SOCKET` (a no-op when run by hand).
///
/// Every message leaves from one serial queue of its own, never from the caller's thread.
/// `sd_notify` blocks while the manager's socket is full — it holds
/// `net.unix.max_dgram_qlen` datagrams, 10 by default — and an event loop blocked there
/// stops serving every connection it holds (a manager busy for a while, or a harness that
/// never reads, did exactly that). Messages keep their order; a `STATUS=` or `WATCHDOG=1`
/// that finds one of its kind still waiting replaces it, so a manager that does not read
/// costs one thread and two pending messages, never a queue that grows.
final class ServiceNotifier: Sendable {
    let enabled: Bool
    private let queue = DispatchQueue(label: "signupd.sd_notify")

    /// What is still to be sent: `ordered` first, in order, then the newest status and a
    /// watchdog ping asked for since the last message of `ordered`.
    private struct Outbox {
        var ordered: [String] = []
        var status: String?
        var watchdog = false
        /// A sender is on the queue (it empties the outbox before it returns).
        var sending = false

        /// Status and ping waiting, as messages: they go before anything asked for later.
        mutating func takeTail() -> [String] {
            defer {
                status = nil
                watchdog = false
            }
            return (status.map { ["STATUS=\($0)"] } ?? []) + (watchdog ? ["WATCHDOG=1"] : [])
        }
    }
    private let outbox = NIOLockedValueBox(Outbox())
    /// The last status line the daemon gave (not "reloading forms"): said again when a
    /// reload is over, since the daemon only sends a line when it changes.
    private let lastStatus = NIOLockedValueBox<String?>(nil)
    /// Where messages go (`sd_notify` outside tests).
    private let transmit: @Sendable (String) -> Void

    init() {
        enabled = getenv("NOTIFY_SOCKET") != nil
        transmit = { _ = csystemd_notify(0, $0) }
    }

    /// For tests: messages go to `transmit`, on the notifier's queue.
    init(transmit: @escaping @Sendable (String) -> Void) {
        enabled = true
        self.transmit = transmit
    }

    func ready(status: String) {
        lastStatus.withLockedValue { $0 = status }
        send("READY=1\nSTATUS=\(status)")
    }
    func stopping(status: String) { send("STOPPING=1\nSTATUS=\(status)") }
    /// A reload starts (`Type=notify-reload`): systemd wants CLOCK_MONOTONIC's time of it,
    /// taken now, not when the message leaves.
    func reloading() {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        send("RELOADING=1\nSTATUS=reloading forms\nMONOTONIC_USEC=\(UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1000)")
    }
    /// A reload is over, applied or refused: ready, with the status line from before it
    /// (systemctl status kept saying "reloading forms" until the counts next changed).
    func readyAgain() {
        let status = lastStatus.withLockedValue { $0 }
        send("READY=1" + (status.map { "\nSTATUS=\($0)" } ?? ""))
    }

    /// The newest status line; replaces one not sent yet.
    func status(_ status: String) {
        guard enabled else { return }
        lastStatus.withLockedValue { $0 = status }
        update { $0.status = status }
    }

    /// Feeds the watchdog; one ping not sent yet counts for both.
    func watchdog() {
        guard enabled else { return }
        update { $0.watchdog = true }
    }

    /// Blocks until every message asked for so far has been handed to the manager, or
    /// `timeout` has passed; returns which. At exit, so that `STOPPING=1` is not lost,
    /// without letting a manager that does not read hold the exit up.
    @discardableResult
    func waitUntilSent(atMost timeout: Duration) -> Bool {
        let sent = DispatchGroup()
        sent.enter()
        // Behind the sender, which returns only once the outbox is empty.
        queue.async { sent.leave() }
        return sent.wait(timeout: .now() + .nanoseconds(Int(timeout.nanoseconds))) == .success
    }

    /// The watchdog interval systemd asked for (`WatchdogSec=`), if any.
    var watchdogInterval: Duration? {
        var usec: UInt64 = 0
        guard csystemd_watchdog_enabled(0, &usec) > 0, usec > 0 else { return nil }
        return .microseconds(Int64(usec))
    }

    /// A message that is never replaced, after what was asked for before it.
    private func send(_ state: String) {
        guard enabled else { return }
        update { outbox in
            outbox.ordered += outbox.takeTail() + [state]
        }
    }

    private func update(_ change: (inout Outbox) -> Void) {
        let startSender = outbox.withLockedValue { outbox in
            change(&outbox)
            defer { outbox.sending = true }
            return !outbox.sending
        }
        if startSender { queue.async { [self] in sendAll() } }
    }

    /// Sends until the outbox is empty. On the queue only.
    private func sendAll() {
        while true {
            let next: [String] = outbox.withLockedValue { outbox in
                if !outbox.ordered.isEmpty { return [outbox.ordered.removeFirst()] }
                let tail = outbox.takeTail()
                if tail.isEmpty { outbox.sending = false }
                return tail
            }
            guard !next.isEmpty else { return }
            next.forEach(transmit)
        }
    }
}
