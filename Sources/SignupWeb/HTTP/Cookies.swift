/// The `Cookie` request header read, and `Set-Cookie` values written (RFC 6265).
enum Cookies {
    /// Name → value of every `Cookie` header; the first of a repeated name wins.
    static func parse(_ headers: [String]) -> [String: String] {
        var cookies: [String: String] = [:]
        for header in headers {
            for pair in header.split(separator: ";") {
                guard let equals = pair.firstIndex(of: "=") else { continue }
                let name = pair[..<equals].trimmingSpaces
                let value = pair[pair.index(after: equals)...].trimmingSpaces
                if cookies[name] == nil, !name.isEmpty { cookies[name] = value }
            }
        }
        return cookies
    }

    /// A `Set-Cookie` value. Every cookie of the bridge is `HttpOnly` unless a script needs
    /// it, `SameSite`, `Path=/`, and `Secure` when the page came over https.
    static func set(
        _ name: String, _ value: String, secure: Bool, httpOnly: Bool = true, sameSite: String = "Strict", maxAge: Int? = nil
    ) -> String {
        var parts = ["\(name)=\(value)", "Path=/", "SameSite=\(sameSite)"]
        if httpOnly { parts.append("HttpOnly") }
        if secure { parts.append("Secure") }
        if let maxAge { parts.append("Max-Age=\(maxAge)") }
        return parts.joined(separator: "; ")
    }

    /// A `Set-Cookie` value that removes `name`.
    static func clear(_ name: String, secure: Bool) -> String {
        set(name, "", secure: secure, maxAge: 0)
    }
}

extension Substring {
    var trimmingSpaces: String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}
