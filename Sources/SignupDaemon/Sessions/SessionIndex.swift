import NIOCore

/// What the index needs of a session (a protocol, so that its tests need no daemon).
protocol IndexedSession: AnyObject, Sendable {
    var id: String { get }
    var principal: Principal { get }
    var openedAt: NIODeadline { get }
}

/// The live sessions by id, and per owner oldest first, with how many each peer holds:
/// what `attach` and `resume` look up, and what `sessions` and `status` answer from. Every
/// answer costs what the asker's own sessions in it cost (and `all`, for administrators,
/// the owners as well), never a walk over every user's sessions.
struct SessionIndex<Item: IndexedSession>: Sendable {
    private struct Entry: Sendable {
        let place: SessionCursor
        let item: Item
    }

    /// A page of sessions, oldest first, and where the next one starts (nil: none left).
    struct Page {
        var items: [Item]
        var next: SessionCursor?
    }

    private var byID: [String: Entry] = [:]
    /// Each owner's sessions in `place` order.
    private var byOwner: [SessionOwner: [Entry]] = [:]
    /// Sessions held per peer (uid, or front-end client), as `status` ranks them.
    private(set) var countsByPeer: [PeerKey: Int] = [:]

    var count: Int { byID.count }

    func find(_ id: String) -> Item? { byID[id]?.item }

    /// How many live sessions `owner` opened.
    func count(ownedBy owner: SessionOwner) -> Int { byOwner[owner]?.count ?? 0 }

    /// Every live session (for a handover), in no order.
    var all: [Item] { byID.values.map(\.item) }

    /// Adds a new session, or one restored after a handover (which may be older than those
    /// already here: it takes its place). One with the same id replaces it.
    mutating func insert(_ item: Item) {
        remove(item.id)
        let entry = Entry(place: SessionCursor(openedAt: item.openedAt, id: item.id), item: item)
        byID[item.id] = entry
        // A new session comes last (an owner's list is in opening order): no search.
        var owned = byOwner.removeValue(forKey: item.principal.owner) ?? []
        if let last = owned.last, entry.place < last.place {
            owned.insert(entry, at: Self.start(of: owned, after: entry.place))
        } else {
            owned.append(entry)
        }
        byOwner[item.principal.owner] = owned
        countsByPeer[item.principal.key, default: 0] += 1
    }

    /// Removes a session; the one removed, if it was here.
    @discardableResult
    mutating func remove(_ id: String) -> Item? {
        guard let entry = byID.removeValue(forKey: id) else { return nil }
        let owner = entry.item.principal.owner
        if var owned = byOwner.removeValue(forKey: owner) {
            let at = Self.boundary(of: owned) { !($0 < entry.place) }
            if at < owned.count, owned[at].item === entry.item { owned.remove(at: at) }
            if !owned.isEmpty { byOwner[owner] = owned }
        }
        let peer = entry.item.principal.key
        let held = (countsByPeer[peer] ?? 1) - 1
        countsByPeer[peer] = held > 0 ? held : nil
        return entry.item
    }

    /// Up to `limit` of `owner`'s sessions after `cursor`, oldest first.
    func page(ownedBy owner: SessionOwner, after cursor: SessionCursor?, limit: Int) -> Page {
        guard let owned = byOwner[owner] else { return Page(items: [], next: nil) }
        let start = cursor.map { Self.start(of: owned, after: $0) } ?? 0
        let end = min(owned.count, start + limit)
        let items = owned[start..<end].map(\.item)
        return Page(items: items, next: end < owned.count ? owned[end - 1].place : nil)
    }

    /// Up to `limit` of every owner's sessions after `cursor`, oldest first: the owners'
    /// lists merged (each owner's first place, then the page).
    func pageOfAll(after cursor: SessionCursor?, limit: Int) -> Page {
        // Each owner's next entry, newest last place first: the oldest is popped from the end.
        var heads: [(place: SessionCursor, owner: SessionOwner, index: Int)] = []
        for (owner, owned) in byOwner {
            let start = cursor.map { Self.start(of: owned, after: $0) } ?? 0
            if start < owned.count { heads.append((owned[start].place, owner, start)) }
        }
        heads.sort { $0.place > $1.place }
        var items: [Item] = []
        var last: SessionCursor?
        while items.count < limit, let head = heads.popLast(), let owned = byOwner[head.owner] {
            items.append(owned[head.index].item)
            last = head.place
            let next = head.index + 1
            guard next < owned.count else { continue }
            let place = owned[next].place
            // Kept in descending order: before the first head that is older.
            var low = 0
            var high = heads.count
            while low < high {
                let middle = (low + high) / 2
                if heads[middle].place > place { low = middle + 1 } else { high = middle }
            }
            heads.insert((place, head.owner, next), at: low)
        }
        return Page(items: items, next: heads.isEmpty ? nil : last)
    }

    /// The first index of `owned` whose place is after `place`.
    private static func start(of owned: [Entry], after place: SessionCursor) -> Int {
        boundary(of: owned) { place < $0 }
    }

    /// The first index of `owned` where `isPast` holds, for an `isPast` that holds from
    /// some index on (a binary search of a list in place order).
    private static func boundary(of owned: [Entry], _ isPast: (SessionCursor) -> Bool) -> Int {
        var low = 0
        var high = owned.count
        while low < high {
            let middle = (low + high) / 2
            if isPast(owned[middle].place) { high = middle } else { low = middle + 1 }
        }
        return low
    }
}
