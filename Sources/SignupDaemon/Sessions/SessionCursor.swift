import NIOCore

/// A place in the oldest-first order of sessions: when one was opened, and its id to order
/// sessions opened in the same nanosecond. A page's `next` is the place of its last
/// session, so a cursor names only a session its asker was shown (their own; anyone's for
/// an administrator's `all`), and the next page starts after that place whether that
/// session still lives or not.
struct SessionCursor: Hashable, Comparable, Sendable {
    /// `openedAt`, in nanoseconds of the monotonic clock (the same across a handover).
    let openedAt: UInt64
    let id: String

    init(openedAt: NIODeadline, id: String) {
        self.openedAt = openedAt.uptimeNanoseconds
        self.id = id
    }

    static func < (lhs: SessionCursor, rhs: SessionCursor) -> Bool {
        (lhs.openedAt, lhs.id) < (rhs.openedAt, rhs.id)
    }

    /// As `next` carries it: "NANOSECONDS-ID" (opaque to clients).
    var wire: String { "\(openedAt)-\(id)" }

    /// A cursor as the server wrote it, or nil: a client's own invention is refused, not guessed at.
    init?(wire: String) {
        guard let dash = wire.utf8.firstIndex(of: UInt8(ascii: "-")) else { return nil }
        let digits = wire.utf8[..<dash]
        let id = wire.utf8[wire.utf8.index(after: dash)...]
        guard (1...20).contains(digits.count), digits.allSatisfy({ (0x30...0x39).contains($0) }),
            let nanoseconds = UInt64(Substring(digits)),
            !id.isEmpty, id.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) })
        else { return nil }
        openedAt = nanoseconds
        self.id = String(Substring(id))
    }
}
