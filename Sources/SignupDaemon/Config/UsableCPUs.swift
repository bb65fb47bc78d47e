import CSystemd
import NIOCore

/// The CPUs signupd may run on: its affinity mask (systemd's `CPUAffinity=`, `taskset`, a
/// container's cpuset), and no more than NIO counts (which also reads a cgroup's CPU quota).
/// The default `--threads` and `--hash-concurrency` follow it: `System.coreCount` alone gave
/// a service confined by `CPUAffinity=1` two event loops on its one CPU (helper-32).
enum UsableCPUs {
    /// The CPUs the calling thread may run on (nil: the kernel would not say).
    static func allowed() -> [Int]? {
        var cpus = [Int32](repeating: 0, count: 1024)
        let count = Int(csystemd_allowed_cpus(&cpus, Int32(cpus.count)))
        guard count > 0 else { return nil }
        return cpus.prefix(min(count, cpus.count)).map(Int.init)
    }

    /// How many: the default for one thread per CPU.
    static var count: Int {
        max(1, min(System.coreCount, allowed()?.count ?? System.coreCount))
    }
}
