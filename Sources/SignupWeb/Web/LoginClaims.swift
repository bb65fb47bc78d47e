import NIOConcurrencyHelpers
import NIOCore

/// Tokens on their way from a login on the WebSocket to the browser's cookie jar. The
/// relay keeps a successful login's token here and gives the page a one-time claim instead;
/// the page POSTs the claim to `/session`, whose answer sets the `HttpOnly` cookie. The
/// token itself never reaches page script. A claim is good once, for 60 seconds, and only
/// with the browser flow it was made for.
final class LoginClaims: Sendable {
    private struct Claim {
        let token: String
        let user: String
        let flow: String
        let expires: NIODeadline
    }

    private let claims = NIOLockedValueBox([String: Claim]())
    let lifetime: TimeAmount
    let capacity: Int

    init(lifetime: TimeAmount = .seconds(60), capacity: Int = 65_536) {
        self.lifetime = lifetime
        self.capacity = capacity
    }

    /// Keeps `token` and returns the claim for it, or nil when too many are waiting.
    func keep(token: String, user: String, flow: String, now: NIODeadline = .now()) -> String? {
        let code = Secrets.make()
        let kept = claims.withLockedValue { claims -> Bool in
            if claims.count >= capacity { claims = claims.filter { $0.value.expires > now } }
            guard claims.count < capacity else { return false }
            claims[code] = Claim(token: token, user: user, flow: flow, expires: now + lifetime)
            return true
        }
        return kept ? code : nil
    }

    /// The token and user of `code`, once, if it was made for `flow` and has not expired.
    func redeem(_ code: String, flow: String, now: NIODeadline = .now()) -> (token: String, user: String)? {
        claims.withLockedValue { claims in
            guard let claim = claims[code], Secrets.equal(claim.flow, flow) else { return nil }
            claims[code] = nil
            return claim.expires > now ? (claim.token, claim.user) : nil
        }
    }
}

/// WebSockets held per address (an IPv6 address counts as its /64), so that one address
/// cannot take every connection of the bridge.
final class AddressLimits: Sendable {
    private let held = NIOLockedValueBox([String: Int]())
    let limit: Int

    init(limit: Int) { self.limit = limit }

    /// Takes a place for `address`; false when it holds `limit` already.
    func take(_ address: String) -> Bool {
        held.withLockedValue { held in
            let key = Self.key(address)
            guard held[key, default: 0] < limit else { return false }
            held[key, default: 0] += 1
            return true
        }
    }

    func release(_ address: String) {
        held.withLockedValue { held in
            let key = Self.key(address)
            held[key, default: 1] -= 1
            if held[key] == 0 { held[key] = nil }
        }
    }

    /// IPv4 as it is; IPv6 by its first four groups (the /64 one subscriber usually holds).
    static func key(_ address: String) -> String {
        guard address.contains(":"), let parsed = try? SocketAddress(ipAddress: address, port: 0), case .v6(let v6) = parsed else { return address }
        let bytes = withUnsafeBytes(of: v6.address.sin6_addr) { Array($0.prefix(8)) }
        return bytes.map { String($0, radix: 16) }.joined(separator: ":") + "::/64"
    }
}
