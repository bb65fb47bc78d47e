/// Who a connection speaks for: the local peer (`SO_PEERCRED`) and, on a trusted front
/// end's connection, the end client it named (`client` op). Fixed once named.
struct Principal: Sendable, Equatable {
    let uid: UInt32
    /// The opaque id a trusted front end gave (a browser flow, an app installation); nil
    /// for everyone else.
    let client: String?
    /// The client's address as the front end saw it, normalised; nil when none was given.
    let address: ClientAddress?

    init(uid: UInt32, client: String? = nil, address: ClientAddress? = nil) {
        self.uid = uid
        self.client = client
        self.address = address
    }

    /// Whose sessions are whose: `sessions`, `attach` and `resume` see only the same owner's.
    var owner: SessionOwner { SessionOwner(uid: uid, client: client) }

    /// What per-peer limits count: the uid; for a named client its address as abusers are
    /// counted (IPv4 /32, IPv6 /64), so that rotating client ids from one address buys
    /// nothing, or its id when the front end gave no address.
    var key: PeerKey {
        guard let client else { return PeerKey(uid: uid) }
        if let address { return PeerKey(uid: uid, client: .network(address.countedNetwork)) }
        return PeerKey(uid: uid, client: .id(client))
    }

    /// Log metadata naming it: uid, and client and address when named.
    var metadata: [String: String] {
        var fields = ["uid": "\(uid)"]
        if let client { fields["client"] = client.loggable }
        if let address { fields["address"] = address.text }
        return fields
    }
}

/// The owner of a session: a uid, and for a front end's connection the client it named.
/// Also the device the login backstop knows an owner's browser by (its id, not its address).
struct SessionOwner: Hashable, Sendable {
    let uid: UInt32
    let client: String?

    /// As the PostgreSQL store keeps a known device (`login_known_client.client`).
    var storedDevice: String { "id:" + (client ?? "") }
}

/// Whom a per-peer limit counts (connections, connect rate, availability answers, queued
/// hashes and their fairness, the share of handling, login throttling, the restart store).
struct PeerKey: Hashable, Sendable, CustomStringConvertible {
    enum Client: Hashable, Sendable {
        /// An address's network as abusers are counted: IPv4 /32, IPv6 /64.
        case network([UInt8])
        /// A client named without an address.
        case id(String)
    }

    let uid: UInt32
    /// nil: the uid itself (a local peer, or a front end before it named a client).
    let client: Client?

    init(uid: UInt32, client: Client? = nil) {
        self.uid = uid
        self.client = client
    }

    /// "uid 1000", "uid 33 address 203.0.113.7", "uid 33 network 2001:db8:0:1::/64", "uid 33 client abc".
    var description: String {
        switch client {
        case nil: "uid \(uid)"
        case .id(let id): "uid \(uid) client \(id.loggable)"
        case .network(let bytes) where bytes.count == 4: "uid \(uid) address \(ClientAddress.text(of: bytes))"
        case .network(let bytes): "uid \(uid) network \(ClientAddress.text(of: bytes + [UInt8](repeating: 0, count: 16 - bytes.count)))/64"
        }
    }
}

extension PeerKey {
    /// The client part as the PostgreSQL store keeps it (`login_failure.client`): "" for a
    /// uid itself, "net:" and the network's bytes in hex, or "id:" and the client id.
    var storedClient: String {
        switch client {
        case nil: ""
        case .network(let bytes): "net:" + bytes.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
        case .id(let id): "id:" + id
        }
    }
}

extension PeerKey: ExpressibleByIntegerLiteral {
    /// A uid itself (tests).
    init(integerLiteral uid: UInt32) { self.init(uid: uid) }
}
