/// Which sessions a handover state keeps when they do not all fit in what the next process
/// reads (issue 27): without this, one uid's sessions made the state too big and the next
/// process closed every carried connection, everyone's. Each owner (a uid, or a front end's
/// client) gets a fair share of the bytes: owners are served from the smallest total up, each
/// to at most an equal split of what is left, so an owner within its share keeps everything
/// and what a small owner leaves goes to the bigger ones. Within its share an owner keeps
/// its smallest sessions first (the most of them).
public enum HandoverShare {
    /// For each session (its encoded size and its owner), whether it is kept within `limit`.
    public static func keep(sizes: [Int], owners: [String], limit: Int) -> [Bool] {
        precondition(sizes.count == owners.count)
        guard sizes.reduce(0, +) > limit else { return Array(repeating: true, count: sizes.count) }
        var byOwner: [String: [Int]] = [:]
        for (index, owner) in owners.enumerated() { byOwner[owner, default: []].append(index) }
        let groups = byOwner.map { owner, indices in
            (owner: owner, indices: indices.sorted { (sizes[$0], $0) < (sizes[$1], $1) }, total: indices.reduce(0) { $0 + sizes[$1] })
        }.sorted { ($0.total, $0.owner) < ($1.total, $1.owner) }
        var keep = Array(repeating: false, count: sizes.count)
        var remaining = max(0, limit)
        for (position, group) in groups.enumerated() {
            let share = remaining / (groups.count - position)
            var used = 0
            for index in group.indices {
                guard used + sizes[index] <= share else { break }
                used += sizes[index]
                keep[index] = true
            }
            remaining -= used
        }
        return keep
    }
}
