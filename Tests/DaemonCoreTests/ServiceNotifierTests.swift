import Dispatch
import NIOConcurrencyHelpers
import Testing
@testable import SignupDaemonCore

/// sd_notify blocks while the service manager's socket is full: the notifier sends from a
/// queue of its own, keeps the order, and lets at most one status line and one watchdog
/// ping wait between two other messages.
@Suite struct ServiceNotifierTests {
    @Test func aManagerThatStopsReadingHoldsUpNoCallerAndWaitingStatusLinesCollapse() {
        let sent = NIOLockedValueBox<[String]>([])
        let stuck = DispatchSemaphore(value: 0)
        let reads = DispatchSemaphore(value: 0)
        let notifier = ServiceNotifier { message in
            sent.withLockedValue { $0.append(message) }
            if message.hasPrefix("READY=1") {
                stuck.signal()
                reads.wait()
            }
        }
        notifier.ready(status: "starting")
        // The manager has stopped reading: the notifier's thread is in its first send.
        stuck.wait()
        // None of these waits for it (a caller on an event loop would otherwise stop).
        notifier.status("1 connection")
        notifier.watchdog()
        notifier.status("2 connections")
        notifier.watchdog()
        notifier.stopping(status: "stopping")
        notifier.status("0 connections")
        notifier.watchdog()
        notifier.status("still 0 connections")
        // Nothing can have left while the manager does not read.
        #expect(!notifier.waitUntilSent(atMost: .milliseconds(20)))
        #expect(sent.withLockedValue { $0 } == ["READY=1\nSTATUS=starting"])
        reads.signal()
        #expect(notifier.waitUntilSent(atMost: .seconds(30)))
        #expect(sent.withLockedValue { $0 } == [
            "READY=1\nSTATUS=starting",
            "STATUS=2 connections", "WATCHDOG=1",
            "STOPPING=1\nSTATUS=stopping",
            "STATUS=still 0 connections", "WATCHDOG=1",
        ])
    }

    @Test func messagesAskedForOneAfterAnotherLeaveInThatOrder() {
        let sent = NIOLockedValueBox<[String]>([])
        let notifier = ServiceNotifier { message in sent.withLockedValue { $0.append(message) } }
        notifier.ready(status: "serving")
        notifier.status("1 connection")
        notifier.reloading()
        notifier.readyAgain()
        notifier.watchdog()
        #expect(notifier.waitUntilSent(atMost: .seconds(30)))
        let messages = sent.withLockedValue { $0 }
        #expect(messages.count == 5)
        #expect(messages.first == "READY=1\nSTATUS=serving")
        #expect(messages.dropFirst().first == "STATUS=1 connection")
        #expect(messages.dropFirst(2).first?.hasPrefix("RELOADING=1\nSTATUS=reloading forms\nMONOTONIC_USEC=") == true)
        // Ready again with the line from before the reload, not "reloading forms" until the
        // counts next change.
        #expect(Array(messages.suffix(2)) == ["READY=1\nSTATUS=1 connection", "WATCHDOG=1"])
    }
}
