import NIOCore

/// Who gives up a place in the restart store when it is full (issue 27): without this, the
/// first uids to fill it kept every place for good, and a person who opened a form later was
/// dropped at the next restart.
///
/// A newcomer (a connection that now holds a session, of uid or client `peer`) takes:
/// 1. a place of the uid holding the most, if that uid holds at least two more than the
///    newcomer's: that uid's least recently used connection; so places converge to equal
///    shares between the uids that want them;
/// 2. otherwise the least recently used connection that has gone `idleAfter` without a
///    request, of a uid holding at least as many places as the newcomer's (its own
///    included): a small holder's idle form is never taken by a bigger one;
/// 3. otherwise nothing: the newcomer is not carried (as before, a restart closes it).
///
/// A pure choice over what the coordinator knows; it moves the place and removes the
/// chosen connection from systemd's store.
enum CarryDisplacement {
    struct Candidate: Equatable {
        let id: ObjectIdentifier
        let peer: PeerKey
        let lastUsed: NIODeadline
    }

    static func choose(
        for peer: PeerKey, among candidates: [Candidate], budget: CarryBudget, now: NIODeadline, idleAfter: TimeAmount
    ) -> Candidate? {
        let mine = budget.stored(peer: peer)
        if let biggest = budget.biggestHolder, biggest.peer != peer, biggest.stored >= mine + 2,
            let oldest = leastRecentlyUsed(candidates.lazy.filter { $0.peer == biggest.peer })
        {
            return oldest
        }
        return leastRecentlyUsed(candidates.lazy.filter { now - $0.lastUsed >= idleAfter && budget.stored(peer: $0.peer) >= mine })
    }

    private static func leastRecentlyUsed(_ candidates: some Sequence<Candidate>) -> Candidate? {
        candidates.min { $0.lastUsed < $1.lastUsed }
    }
}
