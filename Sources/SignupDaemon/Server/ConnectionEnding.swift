/// Why the daemon itself ends a connection. `reason` is what its `bye` says: every
/// such text is here.
enum ConnectionEnding: Equatable, Sendable {
    /// No request and no session for `--idle-connection-timeout`.
    case idle(seconds: Int64)
    /// None of its answers read for that long.
    case stuck(seconds: Int64)
    /// The buffers of all clients passed the budget and this one held the most.
    case overBudget(limit: Int, held: Int)
    /// More unread output than `--max-output-bytes`.
    case slowConsumer(maxOutputBytes: Int)
    /// The server was full and its peer (uid, or front-end client) held the most: another needed the room.
    case displaced(maxConnections: Int, peer: PeerKey, held: Int)
    /// A front end named a client over that client's limits (`client` op).
    case refusedClient(String)
    /// The daemon stops.
    case shutdown(String)
    /// The channel failed: nothing can be said.
    case failed

    var reason: String? {
        switch self {
        case .idle(let seconds): "idle: no request for \(seconds) seconds"
        case .stuck(let seconds): "stuck: none of the answers read for \(seconds) seconds"
        case .overBudget(let limit, let held):
            "over budget: the buffers of all clients passed \(limit) bytes and this connection held \(held) of them"
        case .slowConsumer(let maxOutputBytes): "slow consumer: more than \(maxOutputBytes) bytes unread"
        case .displaced(let maxConnections, let peer, let held):
            "displaced: the server's \(maxConnections) connections are taken and \(peer) holds the most (\(held)); another user needed one"
        case .refusedClient(let reason): reason
        case .shutdown(let reason): reason
        case .failed: nil
        }
    }
}
