#if canImport(Glibc)
import Glibc
#endif

/// An end client's IP address, as a trusted front end names it (`client` op): an IPv4 or
/// IPv6 literal, read by `inet_pton` and written back in its canonical form (`inet_ntop`).
/// An IPv4-mapped IPv6 address (`::ffff:192.0.2.1`) is the IPv4 address it maps.
struct ClientAddress: Sendable, Equatable {
    /// 4 bytes (IPv4) or 16 (IPv6).
    let bytes: [UInt8]

    init?(_ literal: String) {
        guard literal.utf8.count <= 64, !literal.contains("%") else { return nil }
        var v4 = in_addr()
        if inet_pton(AF_INET, literal, &v4) == 1 {
            bytes = withUnsafeBytes(of: &v4) { Array($0) }
            return
        }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, literal, &v6) == 1 else { return nil }
        let all = withUnsafeBytes(of: &v6) { Array($0) }
        bytes = all.prefix(12) == [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF] ? Array(all.suffix(4)) : all
    }

    /// The canonical literal.
    var text: String { Self.text(of: bytes) }

    /// The network limits count it under: the whole IPv4 address, the /64 of an IPv6 one
    /// (what one subscriber is usually given, RFC 6177).
    var countedNetwork: [UInt8] { bytes.count == 4 ? bytes : Array(bytes.prefix(8)) }

    static func text(of bytes: [UInt8]) -> String {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        let family = bytes.count == 4 ? AF_INET : AF_INET6
        let written = bytes.withUnsafeBytes { raw in inet_ntop(family, raw.baseAddress, &buffer, socklen_t(buffer.count)) }
        guard written != nil else { return "?" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
