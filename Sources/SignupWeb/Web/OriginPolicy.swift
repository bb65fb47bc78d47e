import NIOHTTP1

/// Which pages may use the bridge: its own origin (the scheme the person used and `Host`),
/// and the ones the administrator lists (`--allowed-origin`). One place for the WebSocket's
/// upgrade and for every POST.
struct OriginPolicy: Sendable {
    let allowed: Set<String>
    let alwaysHTTPS: Bool

    func own(_ headers: HTTPHeaders, https: Bool) -> String? {
        guard let host = headers.first(name: "Host")?.lowercased(), !host.isEmpty else { return nil }
        return (https || alwaysHTTPS ? "https://" : "http://") + host
    }

    private func permits(_ origin: String, headers: HTTPHeaders, https: Bool) -> Bool {
        let origin = origin.lowercased()
        return origin == own(headers, https: https) || allowed.contains(origin)
    }

    /// A WebSocket must say where its page came from (browsers always do).
    func allowsWebSocket(_ headers: HTTPHeaders, https: Bool) -> Bool {
        guard let origin = headers.first(name: "Origin") else { return false }
        return permits(origin, headers: headers, https: https)
    }

    /// A POST from a page of another site is refused, whatever cookies it carries: by its
    /// `Origin`, or, without one, by `Sec-Fetch-Site`. A client that is no browser (curl, a
    /// script) sends neither and is judged by the CSRF token alone.
    func allowsPost(_ headers: HTTPHeaders, https: Bool) -> Bool {
        if let origin = headers.first(name: "Origin") { return permits(origin, headers: headers, https: https) }
        if let site = headers.first(name: "Sec-Fetch-Site")?.lowercased() { return site == "same-origin" || site == "none" }
        return true
    }
}
