import NIOCore

/// Runs `body` for every item on the item's event loop: one task per loop, all loops at
/// once (10,000 sessions cost a few loop hops, not 10,000). Results in no particular order.
func onTheirLoops<Item: Sendable, Result: Sendable>(
    _ items: [Item], loop: (Item) -> EventLoop, _ body: @escaping @Sendable (Item) -> Result
) async -> [Result] {
    var groups: [ObjectIdentifier: (loop: EventLoop, items: [Item])] = [:]
    for item in items {
        let itemLoop = loop(item)
        groups[ObjectIdentifier(itemLoop), default: (itemLoop, [])].items.append(item)
    }
    let futures = groups.values.map { group in
        let batch = group.items
        return group.loop.submit { batch.map(body) }
    }
    var results: [Result] = []
    results.reserveCapacity(items.count)
    for future in futures {
        if let batch = try? await future.get() { results.append(contentsOf: batch) }
    }
    return results
}
