/// A URL template such as `https://users.example.org/users/{username}`: the HTTP
/// availability service, over TLS for `https://` (port 443 unless given; 80 for `http://`). 404 means available, any 2xx taken, anything else an error.
/// `{username}` is replaced by the name in NFC as typed (case kept: BOB, not bob), `{key}`
/// by its identity key (NFKC_Casefold: bob for BOB, ｂｏｂ and 𝐛𝐨𝐛), both percent-encoded;
/// the template has at least one of them.
struct AvailabilityURLTemplate: Sendable, Equatable {
    /// `https://`: TLS, the certificate verified for `host`.
    var isHTTPS: Bool
    var host: String
    var port: Int
    /// The path and query with `{username}` or `{key}` in it.
    var pathTemplate: String

    enum ParseError: Error, CustomStringConvertible {
        case unsupportedScheme(String)
        case missingPlaceholder
        case invalid(String)
        /// `user:password@` in the authority: never sent (the service's own rule for
        /// credentials is unknown) and never logged.
        case userinfo

        var description: String {
            switch self {
            case .unsupportedScheme(let scheme):
                "unsupported scheme \"\(scheme)\": use http:// or https://"
            case .missingPlaceholder: "the URL template must contain {username} or {key}"
            case .invalid(let why): "invalid URL template: \(why)"
            case .userinfo:
                "a user name or password in the URL (user:password@host) is not supported: signupd sends no credentials; restrict the service by address instead"
            }
        }
    }

    init(_ text: String) throws(ParseError) {
        guard let schemeEnd = text.firstRange(of: "://") else { throw .invalid("no scheme") }
        let scheme = text[..<schemeEnd.lowerBound].lowercased()
        guard scheme == "http" || scheme == "https" else { throw .unsupportedScheme(scheme) }
        isHTTPS = scheme == "https"
        guard text.contains("{username}") || text.contains("{key}") else { throw .missingPlaceholder }
        let rest = text[schemeEnd.upperBound...]
        let authority = rest.prefix { $0 != "/" && $0 != "?" }
        let path = rest.dropFirst(authority.count)
        guard !authority.contains("@") else { throw .userinfo }
        guard !authority.isEmpty, !authority.contains("{") else { throw .invalid("no host") }
        if let colon = authority.lastIndex(of: ":"), !authority.hasSuffix("]") {
            guard let port = Int(authority[authority.index(after: colon)...]), (1...65535).contains(port) else {
                throw .invalid("bad port")
            }
            host = String(authority[..<colon])
            self.port = port
        } else {
            host = String(authority)
            port = isHTTPS ? 443 : 80
        }
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty else { throw .invalid("no host") }
        pathTemplate = path.isEmpty ? "/" : String(path)
    }

    /// The scheme's own port (80, or 443 for https).
    var defaultPort: Int { isHTTPS ? 443 : 80 }

    /// The Host header: the port only when it is not the scheme's, an IPv6 address in brackets.
    var hostHeader: String {
        let name = host.contains(":") ? "[\(host)]" : host
        return port == defaultPort ? name : "\(name):\(port)"
    }

    /// The request target for a name (`username`: NFC as typed, `key`: its identity key),
    /// percent-encoded (RFC 3986 unreserved kept).
    func target(username: String, key: String) -> String {
        pathTemplate.replacing("{username}", with: Self.percentEncoded(username)).replacing("{key}", with: Self.percentEncoded(key))
    }

    private static func percentEncoded(_ text: String) -> String {
        var encoded = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                encoded.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = Array("0123456789ABCDEF".utf8)
                encoded += "%"
                encoded.unicodeScalars.append(Unicode.Scalar(hex[Int(byte >> 4)]))
                encoded.unicodeScalars.append(Unicode.Scalar(hex[Int(byte & 0xF)]))
            }
        }
        return encoded
    }
}
