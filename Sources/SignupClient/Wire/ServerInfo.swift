import SignupProtocol

/// What signupd said of itself in its greeting.
public struct ServerInfo: Sendable, Equatable {
    /// Name and version, e.g. `signupd/0.1.0`.
    public var server: String
    /// The protocol spoken, e.g. `signup/1`.
    public var protocolName: String
    /// The forms it serves.
    public var forms: [String]
    /// Its limits (line length, sessions per connection, unread output).
    public var limits: ServerLimits
    /// The greeting as sent (for tools that relay it).
    public var hello: JSONObject

    /// Reads the first line a daemon sent on `path`: `hello`, or a refusal at the door.
    static func greeting(_ message: ServerMessage, path: String) throws(SignupClientError) -> ServerInfo {
        if let refusal = message.refusal {
            // Refused at the door (too many connections, shutting down): the daemon is
            // there but will not serve us now.
            throw .refusedAtDoor(path: path, refusal)
        }
        guard case .hello(let server, let forms, let limits, let spoken) = message.event else { throw .notSignupd(path: path) }
        // Decoding takes any version it is told; this library speaks signup/1 only.
        guard spoken.hasPrefix("signup/1") else { throw .unsupportedProtocol(spoken) }
        return ServerInfo(server: server, protocolName: spoken, forms: forms, limits: limits, hello: message.members)
    }
}
