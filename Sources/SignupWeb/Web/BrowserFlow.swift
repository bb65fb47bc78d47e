import SignupClient

/// A browser as signupd sees it: the flow cookie names the client (so that a reload's
/// `resume` is the same person's), the address is the one the request came from.
struct BrowserFlow: Sendable {
    /// The bridge's cookies. Over https they carry the `__Host-` prefix, which browsers set only
    /// from this host itself, `Secure` and for `/`: a sibling subdomain or a man in the middle
    /// of plain http cannot plant one (a CSRF token it chose, a flow it knows).
    struct CookieNames: Sendable {
        let flow: String
        let csrf: String
        let token: String

        init(secure: Bool) {
            let prefix = secure ? "__Host-" : ""
            flow = prefix + "signupd_flow"
            csrf = prefix + "signupd_csrf"
            token = prefix + "signupd_token"
        }
    }

    static let localeCookie = "lang"

    /// The flow's id: the cookie's, or a new one (`isNew`: the answer sets the cookie).
    let id: String
    let isNew: Bool
    let address: String?

    init(cookies: [String: String], address: String?, names: CookieNames) {
        (id, isNew) = Secrets.kept(cookies[names.flow])
        self.address = address
    }

    var client: SignupConnection.FrontEndClient { .init(id: "web-" + id, address: address) }
}
