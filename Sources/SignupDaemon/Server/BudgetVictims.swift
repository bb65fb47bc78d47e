/// Which connections a sweep of the buffer budget drops: the owner (a uid, or a person a
/// front end speaks for) holding the most in all gives up its biggest connection, then
/// the owner holding the most after that, and so on, until `excess` bytes are freed. An
/// owner holding less than `floor` in all is never chosen: a quiet client is not the one
/// to pay, however big its one answer, while a uid that spreads what it holds over many
/// small connections still pays for all of them (helper-26: 1,000 connections of 4,000
/// bytes each held 1.9× the budget when the floor was per connection; a victim's one
/// 66 KB read was dropped before an attacker's 800 connections of 5,000 bytes).
struct BudgetVictims<Holder, Owner: Hashable> {
    private struct Holdings {
        var total: Int
        /// Smallest first, so the biggest is taken from the end.
        var connections: [(holder: Holder, bytes: Int)]
    }

    /// Owners by what they hold, as a binary max-heap on `total`.
    private var heap: [Holdings] = []

    init(_ holders: [(holder: Holder, owner: Owner, bytes: Int)], floor: Int) {
        self.floor = floor
        var byOwner: [Owner: Holdings] = [:]
        for entry in holders where entry.bytes > 0 {
            byOwner[entry.owner, default: Holdings(total: 0, connections: [])].total += entry.bytes
            byOwner[entry.owner]?.connections.append((entry.holder, entry.bytes))
        }
        for var holdings in byOwner.values where holdings.total >= floor {
            holdings.connections.sort { $0.bytes < $1.bytes }
            push(holdings)
        }
    }

    private let floor: Int

    /// The connections to drop to free at least `excess` bytes (all there are, if fewer).
    mutating func choose(toFree excess: Int) -> [Holder] {
        var excess = excess
        var chosen: [Holder] = []
        while excess > 0, var top = popMax() {
            let (holder, bytes) = top.connections.removeLast()
            chosen.append(holder)
            excess -= bytes
            top.total -= bytes
            if !top.connections.isEmpty, top.total >= floor { push(top) }
        }
        return chosen
    }

    private mutating func push(_ holdings: Holdings) {
        heap.append(holdings)
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].total > heap[parent].total else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private mutating func popMax() -> Holdings? {
        guard !heap.isEmpty else { return nil }
        heap.swapAt(0, heap.count - 1)
        let top = heap.removeLast()
        var parent = 0
        while true {
            let left = 2 * parent + 1, right = left + 1
            var largest = parent
            if left < heap.count, heap[left].total > heap[largest].total { largest = left }
            if right < heap.count, heap[right].total > heap[largest].total { largest = right }
            guard largest != parent else { break }
            heap.swapAt(parent, largest)
            parent = largest
        }
        return top
    }
}
