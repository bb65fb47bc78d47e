import NIOCore
import Testing
@testable import SignupDaemonCore

/// Issue 27 item 3: `sessions` and `status` answer from a per-owner index, in pages.
@Suite struct SessionIndexTests {
    private final class Item: IndexedSession {
        let id: String
        let principal: Principal
        let openedAt: NIODeadline

        init(_ id: String, _ principal: Principal, at nanoseconds: UInt64) {
            self.id = id
            self.principal = principal
            openedAt = .uptimeNanoseconds(nanoseconds)
        }
    }

    private static let alice = Principal(uid: 1000)
    private static let bob = Principal(uid: 1001)
    private static let browser = Principal(uid: 33, client: "browser-1")

    /// A session id as the directory makes them: 16 hex digits.
    private static func id(_ n: Int) -> String {
        let hex = String(n, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }

    /// Every page of `owner`'s (or everyone's) sessions, `between` run after each page.
    private static func allPages(
        _ index: inout SessionIndex<Item>, of owner: SessionOwner?, limit: Int, between: (inout SessionIndex<Item>, Int) -> Void = { _, _ in }
    ) -> [String] {
        var listed: [String] = []
        var cursor: SessionCursor?
        var pages = 0
        repeat {
            let page = owner.map { index.page(ownedBy: $0, after: cursor, limit: limit) } ?? index.pageOfAll(after: cursor, limit: limit)
            #expect(page.items.count <= limit)
            listed += page.items.map(\.id)
            cursor = page.next
            pages += 1
            between(&index, pages)
        } while cursor != nil && pages < 10_000
        #expect(cursor == nil, "paging ends")
        return listed
    }

    /// The memory-return looks see a flood that came and went between them.
    @Test func theMostSessionsSinceTheLastLookIsKept() {
        var index = SessionIndex<Item>()
        index.insert(Item(Self.id(0), Self.alice, at: 100))
        #expect(index.takeMostSinceLook() == 1)
        for n in 1...40 { index.insert(Item(Self.id(n), Self.bob, at: 100 + UInt64(n))) }
        for n in 1...40 { #expect(index.remove(Self.id(n)) != nil) }
        #expect(index.count == 1)
        #expect(index.takeMostSinceLook() == 41)
        // The next interval starts at the count now.
        #expect(index.takeMostSinceLook() == 1)
    }

    @Test func addRemoveAndRestoreKeepTheCountsRight() {
        var index = SessionIndex<Item>()
        for n in 0..<5 { index.insert(Item(Self.id(n), Self.alice, at: 100 + UInt64(n))) }
        for n in 5..<8 { index.insert(Item(Self.id(n), Self.bob, at: 100 + UInt64(n))) }
        index.insert(Item(Self.id(8), Self.browser, at: 200))
        #expect(index.count == 9)
        #expect(index.count(ownedBy: Self.alice.owner) == 5)
        #expect(index.count(ownedBy: Self.bob.owner) == 3)
        #expect(index.count(ownedBy: Self.browser.owner) == 1)
        #expect(index.count(ownedBy: SessionOwner(uid: 33, client: nil)) == 0)
        #expect(index.countsByPeer == [PeerKey(uid: 1000): 5, PeerKey(uid: 1001): 3, Self.browser.key: 1])

        #expect(index.remove(Self.id(2))?.id == Self.id(2))
        #expect(index.remove(Self.id(2)) == nil)
        for n in 5..<8 { index.remove(Self.id(n)) }
        #expect(index.count == 5)
        #expect(index.count(ownedBy: Self.alice.owner) == 4)
        #expect(index.count(ownedBy: Self.bob.owner) == 0)
        #expect(index.countsByPeer == [PeerKey(uid: 1000): 4, Self.browser.key: 1])
        #expect(index.find(Self.id(2)) == nil && index.find(Self.id(3))?.id == Self.id(3))

        // A session handed over from the previous process, older than those here, takes its place.
        index.insert(Item(Self.id(9), Self.alice, at: 50))
        // The same id again replaces it: counted once.
        index.insert(Item(Self.id(9), Self.alice, at: 50))
        #expect(index.count == 6 && index.count(ownedBy: Self.alice.owner) == 5)
        #expect(index.countsByPeer[PeerKey(uid: 1000)] == 5)
        #expect(index.page(ownedBy: Self.alice.owner, after: nil, limit: 10).items.map(\.id) == [9, 0, 1, 3, 4].map(Self.id))
        #expect(Set(index.all.map(\.id)) == Set([9, 0, 1, 3, 4, 8].map(Self.id)))
    }

    @Test(arguments: [1, 3, 7, 100])
    func pagesListEverySessionOnceInOrder(limit: Int) {
        var index = SessionIndex<Item>()
        // Alice's and Bob's interleaved in time; two of Alice's opened in the same nanosecond.
        for n in 0..<60 { index.insert(Item(Self.id(n), n % 3 == 0 ? Self.bob : Self.alice, at: 1000 + UInt64(n / 2) * 2)) }
        let alices = (0..<60).filter { $0 % 3 != 0 }.map(Self.id).sorted { a, b in
            let (x, y) = (index.find(a)!, index.find(b)!)
            return (x.openedAt, x.id) < (y.openedAt, y.id)
        }
        #expect(Self.allPages(&index, of: Self.alice.owner, limit: limit) == alices)
        // Everyone's, for an administrator: in order across owners.
        let everyone = Self.allPages(&index, of: nil, limit: limit)
        #expect(everyone.count == 60 && Set(everyone).count == 60)
        let places = everyone.map { SessionCursor(openedAt: index.find($0)!.openedAt, id: $0) }
        #expect(places == places.sorted())
    }

    @Test(arguments: [1, 4, 10])
    func sessionsAddedAndRemovedBetweenPagesNeitherRepeatNorHideOthers(limit: Int) {
        var index = SessionIndex<Item>()
        for n in 0..<40 { index.insert(Item(Self.id(n), Self.alice, at: 1000 + UInt64(n))) }
        var removed: Set<String> = []
        var added: [String] = []
        let listed = Self.allPages(&index, of: Self.alice.owner, limit: limit) { index, page in
            // After each page: one already listed and one not yet listed end.
            for victim in [page * limit - 1, page * limit + 2] where victim < 40 {
                if index.remove(Self.id(victim)) != nil { removed.insert(Self.id(victim)) }
            }
            // And, after each of the first three pages, a new one opens.
            guard page <= 3 else { return }
            let new = 1000 + page
            index.insert(Item(Self.id(new), Self.alice, at: 5000 + UInt64(page)))
            added.append(Self.id(new))
        }
        #expect(Set(listed).count == listed.count, "no session is listed twice")
        let order = listed.map { index.find($0).map { SessionCursor(openedAt: $0.openedAt, id: $0.id) } }
        #expect(order.compactMap { $0 } == order.compactMap { $0 }.sorted(), "oldest first")
        // Every session that lived from the first page to the last is listed.
        let throughout = (0..<40).map(Self.id).filter { !removed.contains($0) }
        #expect(throughout.allSatisfy(listed.contains))
        // Those opened while paging are newer than the rest: listed at the end.
        #expect(added.allSatisfy(listed.contains))
        #expect(Array(listed.suffix(added.count)) == added)
    }

    /// Removing leaves empty slots until the list is compacted: through both, at every
    /// step, counts and pages show exactly the live sessions in order.
    @Test(arguments: [1, 7, 100])
    func manyRemovalsInAnyOrderKeepPagesExact(limit: Int) {
        var index = SessionIndex<Item>()
        for n in 0..<300 { index.insert(Item(Self.id(n), Self.alice, at: 1000 + UInt64(n))) }
        var live = (0..<300).map(Self.id)
        var generator = SystemRandomNumberGenerator()
        for (step, victim) in live.shuffled(using: &generator).prefix(290).enumerated() {
            #expect(index.remove(victim) != nil)
            live.removeAll { $0 == victim }
            #expect(index.count(ownedBy: Self.alice.owner) == live.count)
            if step % 29 == 0 || live.count < 20 {
                #expect(Self.allPages(&index, of: Self.alice.owner, limit: limit) == live)
                #expect(Self.allPages(&index, of: nil, limit: limit) == live)
            }
        }
    }

    @Test func anotherOwnersCursorRevealsNothing() throws {
        var index = SessionIndex<Item>()
        for n in 0..<10 { index.insert(Item(Self.id(n), Self.alice, at: 1000 + UInt64(n))) }
        for n in 10..<13 { index.insert(Item(Self.id(n), Self.bob, at: 1000 + UInt64(n))) }
        let alices = index.page(ownedBy: Self.alice.owner, after: nil, limit: 2)
        let cursor = try #require(alices.next)
        // Bob with Alice's cursor: his own sessions after that time, never one of hers.
        let bobs = index.page(ownedBy: Self.bob.owner, after: cursor, limit: 100)
        #expect(bobs.items.map(\.id) == [10, 11, 12].map(Self.id) && bobs.next == nil)
        // A cursor naming an id Bob never had, at any time, places him in his own list only.
        for at in [0, 1005, 1011, UInt64.max] {
            let forged = SessionCursor(openedAt: .uptimeNanoseconds(at), id: Self.id(3))
            #expect(index.page(ownedBy: Self.bob.owner, after: forged, limit: 100).items.allSatisfy { $0.principal.owner == Self.bob.owner })
        }
        // The cursor is of Alice's own last session listed: nothing of anyone else's.
        #expect(cursor.wire == "1001-\(Self.id(1))")
    }

    @Test func cursorsAreReadOnlyAsTheServerWritesThem() {
        let cursor = SessionCursor(openedAt: .uptimeNanoseconds(1_234_567), id: "00ab12cd34ef5678")
        #expect(SessionCursor(wire: cursor.wire) == cursor)
        for bad in ["", "-", "12", "12-", "-00ab", "x1-00ab", "1-00AB", "1-00ab\"", "99999999999999999999999-00ab", "1-2-3", "１-00ab"] {
            #expect(SessionCursor(wire: bad) == nil, "\(bad)")
        }
    }
}
