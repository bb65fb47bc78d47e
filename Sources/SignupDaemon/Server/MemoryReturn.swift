import CSystemd
import Dispatch
import Logging
import NIOConcurrencyHelpers

#if canImport(Glibc)
import Glibc
#endif

/// When to give freed heap memory back to the system (issues 27, 29). glibc keeps what a
/// flood of connections and sessions allocated after they end: a daemon that peaked at 215 MiB
/// stayed there. Once the load (connections plus sessions) has fallen to half its peak while
/// the resident set is still well above where it was, `malloc_trim` returns the free pages.
/// A state machine on observed figures: the caller reads them and carries out the action.
struct MemoryReturnState: Sendable {
    /// How far above its last low the resident set must be for a trim to be worth it.
    let margin: Int
    private var baselineRSS: Int?
    private var peakLoad = 0
    private var trimming = false

    init(margin: Int = 16 << 20) {
        self.margin = margin
    }

    enum Action: Equatable, Sendable {
        case none
        case trim
    }

    /// One look (the daemon's: once a second).
    mutating func observe(rss: Int, load: Int) -> Action {
        peakLoad = max(peakLoad, load)
        let baseline = min(baselineRSS ?? rss, rss)
        baselineRSS = baseline
        guard !trimming, rss >= baseline + margin, load * 2 <= peakLoad else { return .none }
        trimming = true
        return .trim
    }

    /// The trim is done: what it left is the new low, and the load now the peak to fall from.
    mutating func trimmed(rss: Int, load: Int) {
        trimming = false
        baselineRSS = rss
        peakLoad = load
    }
}

/// Carries out `MemoryReturnState`'s actions: the trim runs off the event loops (it walks
/// every arena), and is logged with what it gave back.
final class MemoryReturn: Sendable {
    private let state: NIOLockedValueBox<MemoryReturnState>
    private let logger: Logger

    init(logger: Logger, margin: Int = 16 << 20) {
        state = NIOLockedValueBox(MemoryReturnState(margin: margin))
        self.logger = logger
    }

    func tick(load: @escaping @Sendable () -> Int) {
        guard let before = Self.residentBytes() else { return }
        guard state.withLockedValue({ $0.observe(rss: before, load: load()) }) == .trim else { return }
        DispatchQueue.global(qos: .utility).async { [self] in
            malloc_trim(0)
            let after = Self.residentBytes() ?? before
            state.withLockedValue { $0.trimmed(rss: after, load: load()) }
            // What the heap still holds: in use (live objects) and free (kept by malloc).
            let heap = mallinfo2()
            logger.info("memory returned to the system after the load fell", metadata: [
                "rssBeforeMiB": "\(before >> 20)", "rssAfterMiB": "\(after >> 20)",
                "heapInUseMiB": "\(heap.uordblks >> 20)", "heapFreeMiB": "\(heap.fordblks >> 20)", "mmappedMiB": "\(heap.hblkhd >> 20)",
            ])
        }
    }

    /// The resident set, from /proc/self/statm (pages × page size).
    static func residentBytes() -> Int? {
        let fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 128)
        let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard count > 0 else { return nil }
        let fields = buffer.prefix(count).split(separator: UInt8(ascii: " "))
        guard fields.count > 1, let pages = Int(String(decoding: fields[1], as: UTF8.self)) else { return nil }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }
}
