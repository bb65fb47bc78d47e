import CSystemd
import Logging
import NIOCore
import NIOPosix

/// Whether each event loop thread is pinned to a CPU of its own (`--pin-event-loops`,
/// issue 29).
///
/// Unpinned, Linux's wake-up placement often put both of a 2-core machine's loops on the
/// CPU of the client that woke them, where they waited for each other while the other CPU
/// ran the client (`perf sched`: the loops waited 1.0-1.6 ms on average to run, with CPU to
/// spare), and a process mostly kept the placement it started with. 100 clients
/// (`ndjson-load -c 100`), the same binary, 5 rounds alternated: pinned, p99 0.77-1.06 ms at
/// 158-198k requests/s; `no`, 4.5-4.6 ms in 4 of 5 rounds (1.45 ms in the fifth) at
/// 149-176k (BENCHMARKS.md).
///
/// `auto` pins only when there is one loop per CPU signupd may run on (the default
/// `--threads`), each to its own CPU of that set (systemd's `CPUAffinity=`, a container's
/// cpuset; the default `--threads` is their number, `UsableCPUs`): fewer loops than CPUs keep
/// the kernel's freedom to move them.
enum EventLoopPinning: String, Sendable, CaseIterable {
    case auto
    case no

    /// The CPU for each of `loops` loops, in order, or nil: leave them where the kernel puts them.
    func cpus(loops: Int, allowed: [Int]) -> [Int]? {
        switch self {
        case .no: nil
        case .auto: loops > 1 && loops == allowed.count ? allowed : nil
        }
    }

    /// Pins `group`'s loops as `cpus(loops:allowed:)` says, each from its own thread. Does
    /// not wait: a loop that cannot be pinned says so, at warning, and serves unpinned.
    /// Returns what was decided, for the journal's `serving` line: "2, pinned to CPUs 0 1",
    /// "3 on CPUs 0-1 (not one per CPU)", "2 on CPUs 0-1 (--pin-event-loops no)".
    func apply(to group: MultiThreadedEventLoopGroup, logger: Logger) -> String {
        let loops = Array(group.makeIterator())
        let allowed = UsableCPUs.allowed() ?? []
        guard let cpus = cpus(loops: loops.count, allowed: allowed) else {
            let why = self == .no ? "--pin-event-loops no" : allowed.count < 2 ? "one CPU" : "not one per CPU"
            return "\(loops.count) on CPUs \(Self.list(allowed)) (\(why))"
        }
        for (loop, cpu) in zip(loops, cpus) {
            loop.execute {
                let result = csystemd_pin_current_thread(Int32(cpu))
                if result == 0 {
                    logger.debug("event loop pinned", metadata: ["cpu": "\(cpu)"])
                } else {
                    logger.warning("could not pin an event loop to its CPU; it runs wherever the kernel puts it", metadata: ["cpu": "\(cpu)", "errno": "\(-result)"])
                }
            }
        }
        // Not `joined(separator:)`: its unspecialised form is a scan of the conformance
        // records, the first time, on the way to the first `hello` (issue 29).
        var pinned = ""
        for cpu in cpus { pinned += pinned.isEmpty ? "\(cpu)" : " \(cpu)" }
        return "\(loops.count), pinned to CPUs \(pinned)"
    }

    /// "0-3 6", as Cpus_allowed_list says it ("?" when unknown).
    static func list(_ cpus: [Int]) -> String {
        guard !cpus.isEmpty else { return "?" }
        var ranges: [String] = []
        var start = cpus[0]
        var end = cpus[0]
        for cpu in cpus.dropFirst() + [Int.min] {
            if cpu == end + 1 {
                end = cpu
                continue
            }
            ranges.append(start == end ? "\(start)" : "\(start)-\(end)")
            start = cpu
            end = cpu
        }
        return ranges.joined(separator: " ")
    }
}
