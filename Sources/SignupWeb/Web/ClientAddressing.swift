import NIOCore

/// Who a request comes from: the peer's address, or — when the peer is a trusted proxy —
/// the address it forwarded (`X-Forwarded-For`, read from the right, skipping trusted
/// proxies), and whether the person's side of it is https (`X-Forwarded-Proto`).
struct ClientAddressing: Sendable {
    let trustedProxies: Set<String>

    struct Origin: Sendable, Equatable {
        /// The person's IP address, canonical; nil when unknown (a Unix-socket peer).
        var address: String?
        var https: Bool
    }

    func origin(peer: SocketAddress?, forwardedFor: [String], forwardedProto: String?) -> Origin {
        let peerAddress = peer?.ipAddress.map(Self.canonical)
        guard let proxy = peerAddress, trustedProxies.contains(proxy) else { return Origin(address: peerAddress, https: false) }
        // Each proxy appends the address it saw: the first untrusted one from the right is the person's.
        let hops = forwardedFor.flatMap { $0.split(separator: ",") }.map { Self.canonical($0.trimmingSpaces) }
        var address = proxy
        for hop in hops.reversed() {
            guard Self.isIPLiteral(hop) else { break }  // a garbled entry: trust nothing beyond it
            address = hop
            if !trustedProxies.contains(hop) { break }
        }
        let https = forwardedProto?.split(separator: ",").first?.trimmingSpaces.lowercased() == "https"
        return Origin(address: address, https: https)
    }

    /// An IP literal in its canonical text (`::FFFF:1.2.3.4` as signupd would read it is
    /// left to signupd; here only the spelling is made canonical).
    static func canonical(_ text: String) -> String {
        if let address = try? SocketAddress(ipAddress: text, port: 0), let canonical = address.ipAddress { return canonical }
        return text
    }

    static func isIPLiteral(_ text: String) -> Bool {
        (try? SocketAddress(ipAddress: text, port: 0)) != nil
    }
}
