import FormEngine
import SignupProtocol

/// Why the daemon refuses a request or a connection. Each case knows its wire code and
/// message, and the session it concerns; `event(id:)` is the one place that turns a
/// refusal into an `error` event (PROTOCOL.md "Error codes"). Adding a refusal is adding
/// a case here.
enum RequestFailure: Error, Equatable {
    /// The request line did not decode (the codec's own code and message).
    case malformed(RequestError)
    case lineTooLong(maxBytes: Int)
    case unknownForm(String, known: [String])
    case unknownField(String, form: String, session: String)
    /// A value longer than the field's byte cap; not stored.
    case valueTooLong(field: String, maxBytes: Int, session: String)
    case noSession
    case alreadyHeld(session: String)
    /// The connection holds no session by that id.
    case notHeld(session: String)
    /// No live session has that id.
    case noSuchSession(String)
    case sessionEnded(String)
    case otherUsersSession(String)
    case notReady(session: String)
    case finished(session: String)
    case tooManyRequests(session: String?)
    case hashQueueFullForUser(limit: Int, session: String)
    case hashQueueFull(limit: Int, session: String)
    case sessionsPerConnection(limit: Int)
    /// The session has `--max-views-per-session` connections attached already.
    case viewsPerSession(limit: Int, session: String)
    case tooManyConnections(limit: Int)
    case tooManyConnectionsForUser(uid: UInt32, limit: Int)
    /// The uid opens connections faster than `--max-connects-per-user-per-second`.
    case connectingTooFast(uid: UInt32, perSecond: Int)
    case shuttingDown(session: String?)
    /// Connect-time refusal while the daemon drains.
    case draining
    case invalidToken
    case storeUnavailable
    /// `client` from a peer that is not a trusted front end.
    case notTrusted(uid: UInt32)
    /// A second `client` on a connection, or one after its first `open` or `attach`.
    case clientAlreadyNamed(String)
    case clientAfterSession
    /// `client` with an `address` that is not an IP literal.
    case invalidAddress(String)
    /// The named client holds its share of connections, or connects too fast.
    case tooManyConnectionsForClient(PeerKey, limit: Int)
    /// A trusted front end's uid holds its site-wide ceiling (`--max-connections-per-bridge`).
    case tooManyConnectionsForBridge(uid: UInt32, limit: Int)
    case clientConnectingTooFast(PeerKey, perSecond: Int)
    /// `resume` with a secret that is not the session's.
    case wrongResumeSecret(String)
    /// `resume` or `attach` of a session the server ended, with why (its owner only).
    case sessionEndedBecause(String, reason: String)
    /// An operators' request (`signups` with `pause`, `sessions` with `all`) from someone
    /// who is not root or in `--admin-group`.
    case administratorsOnly(String)
    /// `sessions` with an `after` this server did not write (`SessionCursor`).
    case invalidCursor
    /// `open` or a longer value past the owner's share of session memory (`SessionBytes`).
    case sessionMemory(SessionBytesState.Refusal, limit: Int, session: String?)

    /// A refusal from the form engine, for `session` of form `form`.
    init(_ error: FormError, form: String, session: String) {
        switch error {
        case .unknownField(let name): self = .unknownField(name, form: form, session: session)
        case .valueTooLong(let field, let maxBytes): self = .valueTooLong(field: field, maxBytes: maxBytes, session: session)
        case .notReady: self = .notReady(session: session)
        case .finished: self = .finished(session: session)
        }
    }

    var code: ErrorCode {
        switch self {
        case .malformed(let error): error.code
        case .lineTooLong: .lineTooLong
        case .unknownForm: .unknownForm
        case .unknownField: .unknownField
        case .valueTooLong: .valueTooLong
        case .noSession: .noSession
        case .alreadyHeld: .sessionOpen
        case .notHeld, .noSuchSession, .sessionEnded, .sessionEndedBecause: .unknownSession
        case .otherUsersSession, .notTrusted, .wrongResumeSecret, .administratorsOnly: .forbidden
        case .clientAlreadyNamed, .clientAfterSession: .clientFixed
        case .invalidAddress, .invalidCursor: .invalidRequest
        case .tooManyConnectionsForClient, .tooManyConnectionsForBridge: .limitExceeded
        case .clientConnectingTooFast: .rateLimited
        case .notReady: .notReady
        case .finished: .finished
        case .tooManyRequests, .hashQueueFullForUser, .hashQueueFull, .connectingTooFast: .rateLimited
        case .sessionsPerConnection, .viewsPerSession, .tooManyConnections, .tooManyConnectionsForUser, .draining, .sessionMemory: .limitExceeded
        case .shuttingDown: .shuttingDown
        case .invalidToken: .invalidToken
        case .storeUnavailable: .storeUnavailable
        }
    }

    /// For people: it may change; the code may not.
    var message: String {
        switch self {
        case .malformed(let error): error.message
        case .lineTooLong(let maxBytes): "line longer than \(maxBytes) bytes; discarded"
        case .unknownForm(let name, let known): "unknown form \"\(name)\"; known: \(known.joined(separator: ", "))"
        case .unknownField(let name, let form, _): "form \(form) has no field \"\(name)\""
        case .valueTooLong(let field, let maxBytes, _):
            "the value of \"\(field)\" is longer than its \(maxBytes) bytes (UTF-8); not stored, the field keeps its previous value"
        case .noSession: "no session is open on this connection; send {\"op\":\"open\",\"form\":...} first"
        case .alreadyHeld(let session): "this connection already holds session \(session)"
        case .notHeld(let session): "this connection holds no session \(session)"
        case .noSuchSession(let session): "no session \(session)"
        case .sessionEnded(let session): "session \(session) has ended"
        case .otherUsersSession(let session): "session \(session) belongs to another user"
        case .notReady: "submit is not enabled yet: every field must be ok and nothing in progress"
        case .finished: "this session has completed; open a new one"
        case .tooManyRequests: "too many requests; slow down"
        case .hashQueueFullForUser(let limit, _):
            "too many signups and logins in progress for your uid (at most \(limit)); submit again when one has finished"
        case .hashQueueFull(let limit, _): "too many signups and logins in progress (at most \(limit)); submit again shortly"
        case .sessionsPerConnection(let limit): "at most \(limit) sessions per connection"
        case .viewsPerSession(let limit, let session): "session \(session) has \(limit) connections attached already, the most one session may have (--max-views-per-session)"
        case .tooManyConnections(let limit): "too many connections (limit \(limit))"
        case .tooManyConnectionsForUser(let uid, let limit): "too many connections for uid \(uid) (limit \(limit))"
        case .connectingTooFast(let uid, let perSecond): "uid \(uid) connects too fast (limit \(perSecond) a second)"
        case .shuttingDown: "the server is shutting down; try again after it restarts"
        case .draining: "shutdown"
        case .invalidToken: "unknown, malformed or expired token"
        case .storeUnavailable: "the account store is unavailable"
        case .notTrusted(let uid): "uid \(uid) is not a trusted front end (see --trusted-bridge-group)"
        case .clientAlreadyNamed(let client): "this connection already speaks for client \"\(client)\""
        case .clientAfterSession: "name the client before this connection's first open or attach"
        case .invalidAddress(let address): "\"address\" must be an IPv4 or IPv6 address, not \"\(address)\""
        case .tooManyConnectionsForClient(let key, let limit): "too many connections for \(key) (limit \(limit))"
        case .tooManyConnectionsForBridge(let uid, let limit): "too many connections for front end uid \(uid) (limit \(limit), --max-connections-per-bridge)"
        case .clientConnectingTooFast(let key, let perSecond): "\(key) connects too fast (limit \(perSecond) a second)"
        case .wrongResumeSecret(let session): "wrong resume secret for session \(session)"
        case .sessionEndedBecause(let session, let reason): "session \(session) has ended (\(reason))"
        case .administratorsOnly(let what): "\(what) is for root and members of the administrators' group (--admin-group)"
        case .invalidCursor: "\"after\" must be the \"next\" of the previous sessions page, as the server sent it"
        case .sessionMemory(.overShare(let share), let limit, let session):
            "your sessions hold more than your share (\(share) bytes) of the server's session memory (\(limit) bytes, --max-session-bytes); close sessions you do not need\(session == nil ? "" : " (the field keeps its previous value)")"
        case .sessionMemory(.full, let limit, let session):
            "the server's session memory (\(limit) bytes, --max-session-bytes) is taken; try again when sessions have ended\(session == nil ? "" : " (the field keeps its previous value)")"
        }
    }

    /// Which refusal it is, without its details (`otherUsersSession`): for summarised logs.
    var kind: String {
        let described = "\(self)"
        return described.firstIndex(of: "(").map { String(described[..<$0]) } ?? described
    }

    /// The session the refusal concerns, named in the error.
    var session: String? {
        switch self {
        case .unknownField(_, _, let session), .valueTooLong(_, _, let session), .alreadyHeld(let session), .notHeld(let session), .noSuchSession(let session),
            .sessionEnded(let session), .otherUsersSession(let session), .notReady(let session), .finished(let session),
            .wrongResumeSecret(let session), .sessionEndedBecause(let session, _),
            .hashQueueFullForUser(_, let session), .hashQueueFull(_, let session), .viewsPerSession(_, let session):
            session
        case .tooManyRequests(let session), .shuttingDown(let session), .sessionMemory(_, _, let session): session
        default: nil
        }
    }

    /// The `error` event, echoing the request's id (a malformed line's own, when it had one).
    func event(id: RequestID?) -> ServerEvent {
        var id = id
        if case .malformed(let error) = self { id = error.id }
        return .error(code: code, message: message, session: session, id: id)
    }
}
