import NIOConcurrencyHelpers
import NIOCore
import Prometheus
import Synchronization

/// A histogram observed on every keystroke (`signupd_validation_seconds`): each event loop
/// counts into its own `Shard`, which only that loop writes, and a scrape adds the shards
/// up. The registry's histogram took a lock and walked every bucket on each `set`: 3 % of
/// the daemon's CPU at 100 clients, the two loops contending for the lock (issue 29).
/// Rendered as the registry renders its histograms (`emit`), one series per label value.
final class LoopHistogram: Sendable {
    let name: String
    let help: String
    let labelName: String
    /// The finite upper bounds, ascending.
    private let bounds: [Duration]
    private let boundNanoseconds: [Int64]
    /// Shards by label value, then by event loop; a label value with none yet is listed
    /// (at zero) once `prepare` or `shard` named it.
    private let shards = NIOLockedValueBox<[String: [ObjectIdentifier: Shard]]>([:])

    init(name: String, help: String, labelName: String, buckets: [Duration]) {
        self.name = name
        self.help = help
        self.labelName = labelName
        bounds = buckets.sorted()
        boundNanoseconds = bounds.map { Self.nanoseconds($0) }
    }

    /// The series of `label` exists from now on, at zero until observed.
    func prepare(_ label: String) {
        shards.withLockedValue { table in
            if table[label] == nil { table[label] = [:] }
        }
    }

    /// The shard `loop` writes for `label` (a session fetches its own once, at open).
    func shard(_ label: String, on loop: EventLoop) -> Shard {
        shards.withLockedValue { table in
            let key = ObjectIdentifier(loop)
            if let existing = table[label]?[key] { return existing }
            let made = Shard(bounds: boundNanoseconds)
            table[label, default: [:]][key] = made
            return made
        }
    }

    /// Appends the family in Prometheus' text format: help, type, then per label value
    /// its cumulative buckets, `+Inf`, sum and count.
    func emit(into buffer: inout [UInt8]) {
        let table = shards.withLockedValue { $0 }
        guard !table.isEmpty else { return }
        buffer.append(contentsOf: "# HELP \(name) \(help)\n# TYPE \(name) histogram\n".utf8)
        for label in table.keys.sorted() {
            var counts = [Int](repeating: 0, count: bounds.count + 1)
            var sum: Int64 = 0
            for shard in (table[label] ?? [:]).values {
                for slot in counts.indices { counts[slot] += shard.count(slot) }
                sum += shard.sum
            }
            let labels = "\(labelName)=\"\(Self.escaped(label))\""
            var cumulative = 0
            for (slot, bound) in bounds.enumerated() {
                cumulative += counts[slot]
                buffer.append(contentsOf: "\(name)_bucket{\(labels),le=\"\(bound.bucketRepresentation)\"} \(cumulative)\n".utf8)
            }
            cumulative += counts[bounds.count]
            buffer.append(contentsOf: "\(name)_bucket{\(labels),le=\"+Inf\"} \(cumulative)\n".utf8)
            buffer.append(contentsOf: "\(name)_sum{\(labels)} \(Duration.nanoseconds(sum).bucketRepresentation)\n".utf8)
            buffer.append(contentsOf: "\(name)_count{\(labels)} \(cumulative)\n".utf8)
        }
    }

    /// A label value as the text format writes it: backslash, quote and newline escaped.
    private static func escaped(_ value: String) -> String {
        var text = ""
        for character in value.unicodeScalars {
            switch character {
            case "\\": text += "\\\\"
            case "\"": text += "\\\""
            case "\n": text += "\\n"
            default: text.unicodeScalars.append(character)
            }
        }
        return text
    }

    private static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }

    /// One event loop's counts: per bucket (not cumulative; the last is past every bound)
    /// and the sum in nanoseconds. Only its loop records, so a count is read and written
    /// back rather than locked; a scrape reads each atomically, and the count it reports
    /// is the sum of the buckets it read, so the two always agree.
    final class Shard: @unchecked Sendable {
        private let bounds: [Int64]
        private let slots: UnsafeMutablePointer<Synchronization.Atomic<Int>>
        private let total = Synchronization.Atomic<Int64>(0)

        fileprivate init(bounds: [Int64]) {
            self.bounds = bounds
            slots = .allocate(capacity: bounds.count + 1)
            for slot in 0...bounds.count { (slots + slot).initialize(to: Synchronization.Atomic(0)) }
        }

        deinit {
            slots.deinitialize(count: bounds.count + 1)
            slots.deallocate()
        }

        /// One observation. Its loop only.
        func recordNanoseconds(_ nanoseconds: Int64) {
            var slot = 0
            while slot < bounds.count, bounds[slot] < nanoseconds { slot += 1 }
            slots[slot].store(slots[slot].load(ordering: .relaxed) &+ 1, ordering: .relaxed)
            total.store(total.load(ordering: .relaxed) &+ nanoseconds, ordering: .relaxed)
        }

        fileprivate func count(_ slot: Int) -> Int { slots[slot].load(ordering: .relaxed) }
        fileprivate var sum: Int64 { total.load(ordering: .relaxed) }
    }
}
