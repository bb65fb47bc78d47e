/// The stable error codes of protocol v1. Their raw values are the wire contract:
/// new codes may be added, existing ones never renamed.
public enum ErrorCode: String, Sendable, CaseIterable, Codable {
    /// The line is not valid JSON (syntax, invalid UTF-8, nesting too deep).
    case invalidJSON = "invalid_json"
    /// The line exceeds `limits.maxLineBytes`; the rest of it was discarded.
    case lineTooLong = "line_too_long"
    /// A member is missing, of the wrong type, duplicated, or the line is not an object.
    case invalidRequest = "invalid_request"
    /// `op` names no operation of this protocol.
    case unknownOp = "unknown_op"
    /// `open` names no form of this server.
    case unknownForm = "unknown_form"
    /// `set` names no field of the session's form.
    case unknownField = "unknown_field"
    /// `set` with a value longer, in UTF-8 bytes, than the field's `maxInputBytes`; the
    /// field keeps its previous value.
    case valueTooLong = "value_too_long"
    /// A session operation was sent while this connection holds no session.
    case noSession = "no_session"
    /// `attach` names a session this connection already holds.
    case sessionOpen = "session_open"
    /// The session named does not exist (or is not held by this connection).
    case unknownSession = "unknown_session"
    /// The peer may not do this (attach to another user's session).
    case forbidden = "forbidden"
    /// `submit` while submit is not enabled.
    case notReady = "not_ready"
    /// The session completed successfully and takes no more input.
    case finished = "finished"
    /// Too many requests; slow down.
    case rateLimited = "rate_limited"
    /// A server limit (connections, sessions) would be exceeded.
    case limitExceeded = "limit_exceeded"
    /// `verify` got an unknown, malformed or expired token.
    case invalidToken = "invalid_token"
    /// The server is shutting down and takes no new sessions or submits.
    case shuttingDown = "shutting_down"
    /// The server failed; the request may be retried.
    case `internal` = "internal"
    /// The account store cannot be reached (e.g. PostgreSQL is down): try again later.
    case storeUnavailable = "store_unavailable"
    /// `client` on a connection that named its client already, or after its first `open`
    /// or `attach`: the client a connection speaks for is fixed.
    case clientFixed = "client_fixed"
}

/// A request identifier chosen by the client and echoed on its replies.
public enum RequestID: Sendable, Hashable {
    case string(String)
    case integer(Int64)
}

/// The validation state of one form field.
public enum ValidationState: String, Sendable, Codable, CaseIterable {
    case empty
    case validating
    case ok
    case failed
}
