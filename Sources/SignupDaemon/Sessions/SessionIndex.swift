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

    /// One owner's sessions in `place` order. A removed session leaves its slot empty (its
    /// place kept, so searches still work) until at most half the slots are live, when the
    /// list is compacted: removing is O(log n), not a shift of the owner's whole list (which,
    /// for one uid closing 16,384 sessions, was quadratic and held the lock for seconds).
    private struct OwnerList: Sendable {
        var slots: [Slot] = []
        var live = 0
    }

    private struct Slot: Sendable {
        let place: SessionCursor
        var item: Item?
    }

    /// A page of sessions, oldest first, and where the next one starts (nil: none left).
    struct Page {
        var items: [Item]
        var next: SessionCursor?
    }

    private var byID: [String: Entry] = [:]
    private var byOwner: [SessionOwner: OwnerList] = [:]
    /// Sessions held per peer (uid, or front-end client), as `status` ranks them.
    private(set) var countsByPeer: [PeerKey: Int] = [:]

    var count: Int { byID.count }

    /// The most sessions there were since `takeMostSinceLook` was last called.
    private var mostSinceLook = 0

    /// The most sessions since the previous call (a flood that came and went between two of
    /// the memory-return looks still counts); starts the next interval at the count now.
    mutating func takeMostSinceLook() -> Int {
        defer { mostSinceLook = byID.count }
        return max(mostSinceLook, byID.count)
    }

    func find(_ id: String) -> Item? { byID[id]?.item }

    /// How many live sessions `owner` opened.
    func count(ownedBy owner: SessionOwner) -> Int { byOwner[owner]?.live ?? 0 }

    /// Every live session (for a handover), in no order.
    var all: [Item] { byID.values.map(\.item) }

    /// Adds a new session, or one restored after a handover (which may be older than those
    /// already here: it takes its place). One with the same id replaces it.
    mutating func insert(_ item: Item) {
        remove(item.id)
        let entry = Entry(place: SessionCursor(openedAt: item.openedAt, id: item.id), item: item)
        byID[item.id] = entry
        mostSinceLook = max(mostSinceLook, byID.count)
        var owned = byOwner.removeValue(forKey: item.principal.owner) ?? OwnerList()
        // A new session comes last (an owner's list is in opening order): no search.
        let slot = Slot(place: entry.place, item: item)
        if let last = owned.slots.last, entry.place < last.place {
            owned.slots.insert(slot, at: Self.start(of: owned.slots, after: entry.place))
        } else {
            owned.slots.append(slot)
        }
        owned.live += 1
        byOwner[item.principal.owner] = owned
        countsByPeer[item.principal.key, default: 0] += 1
    }

    /// Removes a session; the one removed, if it was here.
    @discardableResult
    mutating func remove(_ id: String) -> Item? {
        guard let entry = byID.removeValue(forKey: id) else { return nil }
        let owner = entry.item.principal.owner
        if var owned = byOwner.removeValue(forKey: owner) {
            let at = Self.boundary(of: owned.slots) { !($0 < entry.place) }
            if at < owned.slots.count, owned.slots[at].item === entry.item {
                owned.slots[at].item = nil
                owned.live -= 1
            }
            if owned.live > 0 {
                if owned.slots.count >= 64, owned.live * 2 < owned.slots.count { owned.slots.removeAll { $0.item == nil } }
                byOwner[owner] = owned
            }
        }
        let peer = entry.item.principal.key
        let held = (countsByPeer[peer] ?? 1) - 1
        countsByPeer[peer] = held > 0 ? held : nil
        return entry.item
    }

    /// Up to `limit` of `owner`'s sessions after `cursor`, oldest first.
    func page(ownedBy owner: SessionOwner, after cursor: SessionCursor?, limit: Int) -> Page {
        guard let owned = byOwner[owner] else { return Page(items: [], next: nil) }
        var index = Self.nextLive(in: owned.slots, from: cursor.map { Self.start(of: owned.slots, after: $0) } ?? 0)
        var items: [Item] = []
        var last: SessionCursor?
        while items.count < limit, let at = index {
            items.append(owned.slots[at].item!)
            last = owned.slots[at].place
            index = Self.nextLive(in: owned.slots, from: at + 1)
        }
        return Page(items: items, next: index == nil ? nil : last)
    }

    /// Up to `limit` of every owner's sessions after `cursor`, oldest first: the owners'
    /// lists merged (each owner's first place, then the page).
    func pageOfAll(after cursor: SessionCursor?, limit: Int) -> Page {
        // Each owner's next entry, newest last place first: the oldest is popped from the end.
        var heads: [(place: SessionCursor, owner: SessionOwner, index: Int)] = []
        for (owner, owned) in byOwner {
            let start = cursor.map { Self.start(of: owned.slots, after: $0) } ?? 0
            if let at = Self.nextLive(in: owned.slots, from: start) { heads.append((owned.slots[at].place, owner, at)) }
        }
        heads.sort { $0.place > $1.place }
        var items: [Item] = []
        var last: SessionCursor?
        while items.count < limit, let head = heads.popLast(), let owned = byOwner[head.owner] {
            items.append(owned.slots[head.index].item!)
            last = head.place
            guard let next = Self.nextLive(in: owned.slots, from: head.index + 1) else { continue }
            let place = owned.slots[next].place
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

    /// The first slot at or after `index` that holds a session.
    private static func nextLive(in slots: [Slot], from index: Int) -> Int? {
        var at = index
        while at < slots.count {
            if slots[at].item != nil { return at }
            at += 1
        }
        return nil
    }

    /// The first index of `owned` whose place is after `place`.
    private static func start(of owned: [Slot], after place: SessionCursor) -> Int {
        boundary(of: owned) { place < $0 }
    }

    /// The first index of `owned` where `isPast` holds, for an `isPast` that holds from
    /// some index on (a binary search of a list in place order).
    private static func boundary(of owned: [Slot], _ isPast: (SessionCursor) -> Bool) -> Int {
        var low = 0
        var high = owned.count
        while low < high {
            let middle = (low + high) / 2
            if isPast(owned[middle].place) { high = middle } else { low = middle + 1 }
        }
        return low
    }
}
