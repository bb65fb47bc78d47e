import CSystemd
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import Testing
@testable import SignupDaemonCore

/// `--pin-event-loops` (issue 29): `auto` pins one loop per CPU the process may use, each
/// to its own; anything else is left to the kernel.
@Suite struct EventLoopPinningTests {
    @Test func autoPinsOnlyOneLoopPerAllowedCPU() {
        #expect(EventLoopPinning.auto.cpus(loops: 2, allowed: [0, 1]) == [0, 1])
        // A cpuset (systemd's CPUAffinity=, a container): its CPUs, in order.
        #expect(EventLoopPinning.auto.cpus(loops: 3, allowed: [2, 5, 7]) == [2, 5, 7])
        // Fewer loops than CPUs (--threads), more, or one: the kernel places them.
        #expect(EventLoopPinning.auto.cpus(loops: 1, allowed: [0, 1]) == nil)
        #expect(EventLoopPinning.auto.cpus(loops: 4, allowed: [0, 1]) == nil)
        #expect(EventLoopPinning.auto.cpus(loops: 1, allowed: [0]) == nil)
        #expect(EventLoopPinning.no.cpus(loops: 2, allowed: [0, 1]) == nil)
    }

    /// The real thing: each loop's thread ends up allowed on exactly its CPU.
    @Test func eachLoopThreadRunsOnItsOwnCPU() async throws {
        let allowed = try #require(EventLoopPinning.allowedCPUs())
        guard allowed.count > 1 else { return }  // one CPU: nothing to pin (auto says nil above)
        let group = MultiThreadedEventLoopGroup(numberOfThreads: allowed.count)
        let lines = NIOLockedValueBox<[CollectingLogHandler.Line]>([])
        EventLoopPinning.auto.apply(to: group, logger: Logger(label: "pinning-test") { _ in CollectingLogHandler(lines: lines, logLevel: .debug) })
        var seen: [[Int]] = []
        for loop in group.makeIterator() {
            // Queued after the pinning task on the same loop, so it runs after it.
            seen.append(try await loop.submit { EventLoopPinning.allowedCPUs() ?? [] }.get())
        }
        #expect(seen == allowed.map { [$0] })
        #expect(lines.withLockedValue { $0 }.filter { $0.message == "event loop pinned" }.count == allowed.count)
        // The test's own thread is not touched.
        #expect(EventLoopPinning.allowedCPUs() == allowed)
        try await group.shutdownGracefully()
    }
}
