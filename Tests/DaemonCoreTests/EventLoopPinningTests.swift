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
        let allowed = try #require(UsableCPUs.allowed())
        guard allowed.count > 1 else { return }  // one CPU: nothing to pin (auto says nil above)
        let group = MultiThreadedEventLoopGroup(numberOfThreads: allowed.count)
        let lines = NIOLockedValueBox<[CollectingLogHandler.Line]>([])
        let said = EventLoopPinning.auto.apply(to: group, logger: Logger(label: "pinning-test") { _ in CollectingLogHandler(lines: lines, logLevel: .debug) })
        #expect(said == "\(allowed.count), pinned to CPUs \(allowed.map(String.init).joined(separator: " "))")
        var seen: [[Int]] = []
        for loop in group.makeIterator() {
            // Queued after the pinning task on the same loop, so it runs after it.
            seen.append(try await loop.submit { UsableCPUs.allowed() ?? [] }.get())
        }
        #expect(seen == allowed.map { [$0] })
        #expect(lines.withLockedValue { $0 }.filter { $0.message == "event loop pinned" }.count == allowed.count)
        // The test's own thread is not touched.
        #expect(UsableCPUs.allowed() == allowed)
        try await group.shutdownGracefully()
    }

    /// What the journal's `serving` line says when the loops are left to the kernel.
    @Test func unpinnedLoopsAreSaidWithTheirCPUs() async throws {
        let allowed = try #require(UsableCPUs.allowed())
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let logger = Logger(label: "pinning-test")
        #expect(EventLoopPinning.no.apply(to: group, logger: logger) == "1 on CPUs \(EventLoopPinning.list(allowed)) (--pin-event-loops no)")
        if allowed.count > 1 {
            #expect(EventLoopPinning.auto.apply(to: group, logger: logger) == "1 on CPUs \(EventLoopPinning.list(allowed)) (not one per CPU)")
        }
        try await group.shutdownGracefully()
        #expect(EventLoopPinning.list([0, 1, 2, 3, 6, 8, 9]) == "0-3 6 8-9")
        #expect(EventLoopPinning.list([1]) == "1" && EventLoopPinning.list([]) == "?")
    }

    /// The default `--threads` and `--hash-concurrency`: the CPUs of the affinity mask
    /// (helper-32: `CPUAffinity=1` gave two loops on one CPU), never more than NIO counts.
    @Test func theDefaultCountFollowsTheAffinityMask() async throws {
        let allowed = try #require(UsableCPUs.allowed())
        #expect(UsableCPUs.count == min(System.coreCount, allowed.count))
        // Confined to one CPU, on a loop thread of its own (the mask is per thread).
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let cpu = allowed.last ?? 0
        let (count, mask) = try await group.next().submit { () -> (Int, [Int]?) in
            _ = csystemd_pin_current_thread(Int32(cpu))
            return (UsableCPUs.count, UsableCPUs.allowed())
        }.get()
        #expect(count == 1 && mask == [cpu])
        try await group.shutdownGracefully()
    }
}
