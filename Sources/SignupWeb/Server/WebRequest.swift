import NIOHTTP1

/// One HTTP request as the routes see it: its head, its body (bounded) and who sent it.
struct WebRequest: Sendable {
    var method: HTTPMethod
    /// The path without the query.
    var path: String
    var query: [String: String]
    var headers: HTTPHeaders
    var body: [UInt8]
    var origin: ClientAddressing.Origin

    init(head: HTTPRequestHead, body: [UInt8], origin: ClientAddressing.Origin) {
        method = head.method
        let parts = head.uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        path = String(parts.first ?? "/")
        query = parts.count > 1 ? FormBody.parse(Array(parts[1].utf8)) ?? [:] : [:]
        headers = head.headers
        self.body = body
        self.origin = origin
    }

    var cookies: [String: String] { Cookies.parse(headers["Cookie"]) }

    /// The fields of a plain form's POST; nil when the body is not one.
    var formFields: [String: String]? {
        guard headers.first(name: "Content-Type")?.lowercased().hasPrefix("application/x-www-form-urlencoded") ?? false else { return nil }
        return FormBody.parse(body)
    }
}
