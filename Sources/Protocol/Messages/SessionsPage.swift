/// Which page of `sessions` a request asks for: at most `limit` sessions (the server's
/// default when nil), after the `next` cursor of the previous page (the first page when nil).
public struct SessionsPage: Sendable, Equatable {
    /// Sessions per page when a request names no `limit` (older clients get the first page).
    public static let defaultLimit = 100
    /// The largest `limit` a request may name: a page's work is bounded.
    public static let maxLimit = 500
    /// The longest cursor a request may carry (UTF-8 bytes); the server's are far shorter.
    public static let maxCursorBytes = 128

    public var limit: Int?
    /// The `next` of the previous reply, as the server sent it: opaque to clients.
    public var after: String?

    public init(limit: Int? = nil, after: String? = nil) {
        self.limit = limit
        self.after = after
    }

    /// The first page, of the default size.
    public static let first = SessionsPage()

    /// How many sessions the page holds at most.
    public var size: Int { limit ?? Self.defaultLimit }
}

extension JSONMembers where Failure == RequestError {
    /// `limit` and `after` of a `sessions` request, checked: 1 to `maxLimit`, and a
    /// non-empty cursor no longer than `maxCursorBytes`.
    func sessionsPage() throws(RequestError) -> SessionsPage {
        let outOfRange = failure("limit", .invalid("\"limit\" must be 1 to \(SessionsPage.maxLimit) (the default is \(SessionsPage.defaultLimit))"))
        // A number past 64 bits (10^20) or with a fraction is a number out of range, not "not an integer".
        if case .number = object["limit"], object["limit"]?.int64Value == nil { throw outOfRange }
        let limit = try optionalInt("limit")
        if let limit, !(1...SessionsPage.maxLimit).contains(limit) { throw outOfRange }
        let after = try optionalString("after")
        if let after, after.isEmpty || after.utf8.count > SessionsPage.maxCursorBytes {
            throw failure("after", .invalid("\"after\" must be the \"next\" of the previous page"))
        }
        return SessionsPage(limit: limit, after: after)
    }
}

extension SessionsPage {
    /// Its members of a `sessions` request (none for the first page of the default size).
    func encode(into writer: inout JSONWriter) {
        if let limit { writer.member("limit", limit) }
        if let after { writer.member("after", after) }
    }
}
