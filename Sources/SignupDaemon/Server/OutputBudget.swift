import Synchronization

/// The unread output of all connections together. Each connection reports how much of its
/// output the client has not read yet (sampled after each write and once a second while
/// any is pending); past `limit` in total, a connection holding more than `fairShare` of
/// it is dropped as a slow consumer, so that many clients that each stay under
/// `--max-output-bytes` still cannot make the daemon buffer without bound.
final class OutputBudget: Sendable {
    let limit: Int
    let fairShare: Int
    private let total = Atomic<Int>(0)

    init(limit: Int, fairShare: Int = 64 * 1024) {
        self.limit = limit
        self.fairShare = fairShare
    }

    /// Adds `delta` (negative when output was read) and returns the new total.
    func add(_ delta: Int) -> Int {
        guard delta != 0 else { return total.load(ordering: .relaxed) }
        return total.add(delta, ordering: .relaxed).newValue
    }

    var unread: Int { total.load(ordering: .relaxed) }
}
