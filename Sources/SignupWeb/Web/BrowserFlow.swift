import SignupClient

/// A browser as signupd sees it: the flow cookie names the client (so that a reload's
/// `resume` is the same person's), the address is the one the request came from.
struct BrowserFlow: Sendable {
    static let cookie = "signupd_flow"
    static let csrfCookie = "signupd_csrf"
    static let tokenCookie = "signupd_token"
    static let localeCookie = "lang"

    /// The flow's id: the cookie's, or a new one (`isNew`: the answer sets the cookie).
    let id: String
    let isNew: Bool
    let address: String?

    init(cookies: [String: String], address: String?) {
        (id, isNew) = Secrets.kept(cookies[Self.cookie])
        self.address = address
    }

    var client: SignupConnection.FrontEndClient { .init(id: "web-" + id, address: address) }
}
