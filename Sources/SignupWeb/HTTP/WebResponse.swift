import NIOHTTP1

/// One HTTP response, with the headers every answer of the bridge carries.
struct WebResponse: Sendable {
    var status: HTTPResponseStatus
    var headers: [(String, String)]
    var body: [UInt8]

    init(_ status: HTTPResponseStatus, type: String = "text/plain; charset=utf-8", body: [UInt8] = [], headers: [(String, String)] = []) {
        self.status = status
        self.body = body
        self.headers = [("Content-Type", type)] + Self.securityHeaders + headers
    }

    init(_ status: HTTPResponseStatus, text: String) {
        self.init(status, body: Array((text + "\n").utf8))
    }

    static func html(_ page: String, status: HTTPResponseStatus = .ok, headers: [(String, String)] = []) -> WebResponse {
        WebResponse(status, type: "text/html; charset=utf-8", body: Array(page.utf8), headers: [("Cache-Control", "no-store")] + headers)
    }

    static func json(_ text: String, status: HTTPResponseStatus = .ok, headers: [(String, String)] = []) -> WebResponse {
        WebResponse(status, type: "application/json", body: Array((text + "\n").utf8), headers: [("Cache-Control", "no-store")] + headers)
    }

    static func redirect(to location: String, headers: [(String, String)] = []) -> WebResponse {
        WebResponse(.seeOther, headers: [("Location", location), ("Cache-Control", "no-store")] + headers)
    }

    /// Scripts and styles from this origin only, no frames, no foreign form targets; the
    /// WebSocket is same-origin too (`connect-src 'self'`).
    static let contentSecurityPolicy =
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

    static let securityHeaders: [(String, String)] = [
        ("Content-Security-Policy", contentSecurityPolicy),
        ("X-Content-Type-Options", "nosniff"),
        ("X-Frame-Options", "DENY"),
        ("Referrer-Policy", "same-origin"),
    ]
}
