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
/// the resident set is well above its lowest, `malloc_trim` returns the free pages; and again
/// if the load halves once more. A flood's sessions often end over several seconds, after the
/// first trim: while the resident set stays well above its lowest and the load does not rise,
/// a few follow-up trims come at doubling spacing (3, 6, 12 looks), then none until the load
/// has risen and fallen anew, so memory that cannot be returned (fragmentation) costs no trim
/// every second; a trim that gave back less than `minimumReturn` ends its follow-ups. A
/// state machine on observed figures: the caller reads them and carries out the action.
struct MemoryReturnState: Sendable {
    /// How far above its lowest the resident set must be for a trim to be worth it.
    let margin: Int
    /// The smallest peak that counts as a flood: ordinary ups and downs are left alone.
    let minimumPeak: Int
    /// Looks (seconds, at one a second) between two trims.
    let spacing: Int
    /// How many follow-up trims one passing flood may have.
    let followUps: Int
    /// A trim that gives back less than this (1 MiB) found nothing worth another look.
    static let minimumReturn = 1 << 20
    /// The resident set when the trim being carried out was asked for.
    private var rssWhenAsked = 0
    private var lowestRSS: Int?
    private var peakLoad = 0
    private var trimming = false
    private var looksSinceTrim = Int.max
    private var loadAtTrim = 0
    private var followUpsLeft = 0
    private var followUpSpacing = 0

    /// The daemon's margin: 4 MiB above the lowest set is worth a trim once a flood's load has
    /// halved (with 16 MiB, a fresh-eyes trial saw a daemon that started at 41 MB settle at
    /// 50-58 MB after floods, each within the margin, none trimmed).
    static let defaultMargin = 4 << 20

    init(margin: Int = defaultMargin, minimumPeak: Int = 256, spacing: Int = 3, followUps: Int = 3) {
        self.margin = margin
        self.minimumPeak = minimumPeak
        self.spacing = spacing
        self.followUps = followUps
    }

    enum Action: Equatable, Sendable {
        case none
        case trim
    }

    /// One look (the daemon's: once a second). `highest` is the most load there was since
    /// the previous look (nil: `load`): a flood that rose and ended between two looks is
    /// still a flood.
    mutating func observe(rss: Int, load: Int, highest: Int? = nil) -> Action {
        peakLoad = max(peakLoad, load, highest ?? load)
        let lowest = min(lowestRSS ?? rss, rss)
        lowestRSS = lowest
        if looksSinceTrim < Int.max { looksSinceTrim += 1 }
        guard !trimming else { return .none }
        if rss >= lowest + margin, looksSinceTrim >= spacing, peakLoad >= minimumPeak, load * 2 <= peakLoad {
            // A flood has passed (or halved again): its follow-ups start over.
            followUpsLeft = followUps
            followUpSpacing = spacing
        } else if rss >= lowest + margin / 2, followUpsLeft > 0, looksSinceTrim >= followUpSpacing, load <= loadAtTrim {
            // What the flood's last sessions freed after the previous trim, down to half the
            // margin: a first trim that left the set just under the margin (CI: 17 MiB of
            // free heap kept at 68 MiB, lowest 51) still gets its follow-ups.
            followUpsLeft -= 1
            followUpSpacing *= 2
        } else {
            return .none
        }
        trimming = true
        rssWhenAsked = rss
        return .trim
    }

    /// The trim is done: the load now is the peak a further trim waits to see halved. One
    /// that gave back less than `minimumReturn` ends the follow-ups: what is left is in use
    /// or fragmented, and the next flood starts them over.
    mutating func trimmed(rss: Int, load: Int) {
        if rssWhenAsked - rss < Self.minimumReturn { followUpsLeft = 0 }
        trimming = false
        peakLoad = load
        loadAtTrim = load
        looksSinceTrim = 0
    }
}

/// Carries out `MemoryReturnState`'s actions: the trim runs off the event loops (it walks
/// every arena), and is logged with what it gave back.
final class MemoryReturn: Sendable {
    private let state: NIOLockedValueBox<MemoryReturnState>
    private let logger: Logger

    /// Takes its first look now, at start: a flood in the first second (before the first
    /// once-a-second look) is measured against the set before it, not against its own peak.
    init(logger: Logger, margin: Int = MemoryReturnState.defaultMargin) {
        var first = MemoryReturnState(margin: margin)
        if let rss = Self.residentBytes() { _ = first.observe(rss: rss, load: 0) }
        state = NIOLockedValueBox(first)
        self.logger = logger
    }

    /// One look. `load` is the connections and sessions now; `highest`, the most of them
    /// since the previous look (each count's high-water mark, taken and reset).
    func tick(load: @escaping @Sendable () -> Int, highest: () -> Int) {
        guard let before = Self.residentBytes() else { return }
        let now = load()
        let most = highest()
        guard state.withLockedValue({ $0.observe(rss: before, load: now, highest: most) }) == .trim else { return }
        DispatchQueue.global(qos: .utility).async { [self] in
            malloc_trim(0)
            let after = Self.residentBytes() ?? before
            state.withLockedValue { $0.trimmed(rss: after, load: load()) }
            // What the heap still holds: in use (live objects) and free (kept by malloc, its
            // pages mostly given back by the trim: not resident).
            let heap = mallinfo2()
            let metadata: Logger.Metadata = [
                "rssBeforeMiB": "\(before >> 20)", "rssAfterMiB": "\(after >> 20)",
                "heapInUseMiB": "\(heap.uordblks >> 20)", "heapFreeMiB": "\(heap.fordblks >> 20)", "mmappedMiB": "\(heap.hblkhd >> 20)",
            ]
            // Said only when something was returned: a trim that found nothing is a debug line.
            if before - after >= MemoryReturnState.minimumReturn {
                logger.info("memory returned to the system after the load fell", metadata: metadata)
            } else {
                logger.debug("a trim after the load fell found no memory to return", metadata: metadata)
            }
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
