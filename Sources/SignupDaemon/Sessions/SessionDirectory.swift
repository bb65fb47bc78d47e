import NIOConcurrencyHelpers
import NIOCore
import SignupProtocol

/// All live sessions by id, so that `attach` and `resume` can find one from any
/// connection, and per owner, so that `sessions` and `status` answer from the asker's own
/// (`SessionIndex`); and the latest ended ones with why, so that a `resume` after the grace
/// hears why not.
final class SessionDirectory: Sendable {
    private let sessions = NIOLockedValueBox(SessionIndex<Session>())

    /// A session that ended with a reason of the server's own (idle, abandoned), for its owner.
    private struct Ended {
        let owner: SessionOwner
        let reason: String
    }
    /// The latest `maxEnded` of them, oldest first.
    private let ended = NIOLockedValueBox<(byID: [String: Ended], order: [String])>(([:], []))
    static let maxEnded = 4096

    /// Sessions waiting for `resume`, per peer, oldest first: a peer that opens forms and
    /// drops its connections again and again keeps at most `maxDetachedPerPeer` of them.
    private let detachedByPeer = NIOLockedValueBox<[PeerKey: [Session]]>([:])
    let maxDetachedPerPeer: Int

    init(maxDetachedPerPeer: Int = 256) {
        self.maxDetachedPerPeer = maxDetachedPerPeer
    }

    /// `session` now waits for `resume`; returns the sessions of the same peer that must end
    /// to keep it within `maxDetachedPerPeer` (the oldest waiting).
    func detached(_ session: Session) -> [Session] {
        detachedByPeer.withLockedValue { table in
            var waiting = table[session.principal.key, default: []]
            waiting.append(session)
            let evicted = waiting.count > maxDetachedPerPeer ? Array(waiting.prefix(waiting.count - maxDetachedPerPeer)) : []
            waiting.removeFirst(evicted.count)
            table[session.principal.key] = waiting
            return evicted
        }
    }

    /// Sessions waiting for `resume`, of every peer.
    var detachedCount: Int { detachedByPeer.withLockedValue { $0.values.reduce(0) { $0 + $1.count } } }

    /// `session` no longer waits (resumed, or ended).
    func reattached(_ session: Session) {
        detachedByPeer.withLockedValue { table in
            guard var waiting = table[session.principal.key], let index = waiting.firstIndex(where: { $0 === session }) else { return }
            waiting.remove(at: index)
            table[session.principal.key] = waiting.isEmpty ? nil : waiting
        }
    }

    var count: Int { sessions.withLockedValue { $0.count } }

    /// The most live sessions since the previous call (for the memory-return looks).
    func takeMostSinceLook() -> Int { sessions.withLockedValue { $0.takeMostSinceLook() } }

    /// Registers a session under a fresh random id and returns it.
    func add(_ make: (String) -> Session) -> Session {
        sessions.withLockedValue { index in
            var id: String
            repeat {
                id = Self.randomID()
            } while index.find(id) != nil
            let session = make(id)
            index.insert(session)
            return session
        }
    }

    func find(_ id: String) -> Session? {
        sessions.withLockedValue { $0.find(id) }
    }

    /// A page of the live sessions opened by `owner` (a uid, or a front end's client), oldest
    /// first (for `sessions`); those whose opener's connection dropped say for how long.
    func summaries(ownedBy owner: SessionOwner, after cursor: SessionCursor?, limit: Int, now: NIODeadline) -> (summaries: [SessionSummary], next: SessionCursor?) {
        let page = sessions.withLockedValue { $0.page(ownedBy: owner, after: cursor, limit: limit) }
        return (Self.summaries(of: page.items, now: now, naming: false), page.next)
    }

    /// How many live sessions `owner` opened (for `status`).
    func count(ownedBy owner: SessionOwner) -> Int {
        sessions.withLockedValue { $0.count(ownedBy: owner) }
    }

    /// A page of every live session, with its owner (`sessions` with `all`, administrators only).
    func allSummaries(after cursor: SessionCursor?, limit: Int, now: NIODeadline) -> (summaries: [SessionSummary], next: SessionCursor?) {
        let page = sessions.withLockedValue { $0.pageOfAll(after: cursor, limit: limit) }
        return (Self.summaries(of: page.items, now: now, naming: true), page.next)
    }

    /// Sessions held per peer (uid, or front-end client), for `status`.
    func countsByPeer() -> [PeerKey: Int] {
        sessions.withLockedValue { $0.countsByPeer }
    }

    private static func summaries(of sessions: [Session], now: NIODeadline, naming: Bool) -> [SessionSummary] {
        sessions.map { session in
            SessionSummary(
                session: session.id, form: session.formName,
                ageSeconds: Int((now - session.openedAt).nanoseconds / 1_000_000_000), views: session.views,
                detachedSeconds: session.detachedFor(now: now).map { Int($0.nanoseconds / 1_000_000_000) },
                uid: naming ? Int(session.principal.uid) : nil, client: naming ? session.principal.client : nil
            )
        }
    }

    /// Why `id` ended, if the server ended it lately and `owner` is its owner (nobody else
    /// learns that it existed).
    func endReason(of id: String, for owner: SessionOwner) -> String? {
        ended.withLockedValue { ended in ended.byID[id].flatMap { $0.owner == owner ? $0.reason : nil } }
    }

    /// Every live session (for a handover).
    var all: [Session] { sessions.withLockedValue { $0.all } }

    /// Registers a session handed over by the previous process under its own id.
    func restore(_ session: Session) {
        sessions.withLockedValue { $0.insert(session) }
    }

    /// A session ended; with a `reason` of the server's own, that is remembered for its owner.
    func remove(_ id: String, owner: SessionOwner? = nil, reason: String? = nil) {
        _ = sessions.withLockedValue { $0.remove(id) }
        guard let owner, let reason else { return }
        ended.withLockedValue { ended in
            if ended.byID.updateValue(Ended(owner: owner, reason: reason), forKey: id) == nil { ended.order.append(id) }
            if ended.order.count > Self.maxEnded {
                ended.byID[ended.order.removeFirst()] = nil
            }
        }
    }

    /// 64 random bits in hex: unguessable enough that ids do not leak across users, while
    /// `attach` still checks the peer's uid.
    private static func randomID() -> String {
        let value = UInt64.random(in: 0...UInt64.max)
        let hex = String(value, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }
}

/// What the directory indexes.
extension Session: IndexedSession {}
