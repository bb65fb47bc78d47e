import NIOConcurrencyHelpers
import NIOCore
import SignupProtocol

/// All live sessions by id, so that `attach` can find one from any connection.
final class SessionDirectory: Sendable {
    private let sessions = NIOLockedValueBox<[String: Session]>([:])

    var count: Int { sessions.withLockedValue { $0.count } }

    /// Registers a session under a fresh random id and returns it.
    func add(_ make: (String) -> Session) -> Session {
        sessions.withLockedValue { table in
            var id: String
            repeat {
                id = Self.randomID()
            } while table[id] != nil
            let session = make(id)
            table[id] = session
            return session
        }
    }

    func find(_ id: String) -> Session? {
        sessions.withLockedValue { $0[id] }
    }

    /// The live sessions opened by `uid`, oldest first (for `sessions`).
    func summaries(ownedBy uid: UInt32, now: NIODeadline) -> [SessionSummary] {
        let owned = sessions.withLockedValue { table in table.values.filter { $0.ownerUID == uid } }
        return owned.sorted { $0.openedAt < $1.openedAt }.map { session in
            SessionSummary(
                session: session.id, form: session.formName,
                ageSeconds: Int((now - session.openedAt).nanoseconds / 1_000_000_000), views: session.views
            )
        }
    }

    /// Every live session (for a handover).
    var all: [Session] { sessions.withLockedValue { Array($0.values) } }

    /// Registers a session handed over by the previous process under its own id.
    func restore(_ session: Session) {
        sessions.withLockedValue { $0[session.id] = session }
    }

    func remove(_ id: String) {
        _ = sessions.withLockedValue { $0.removeValue(forKey: id) }
    }

    /// 64 random bits in hex: unguessable enough that ids do not leak across users, while
    /// `attach` still checks the peer's uid.
    private static func randomID() -> String {
        let value = UInt64.random(in: 0...UInt64.max)
        let hex = String(value, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }
}
