import SignupClient

/// What the bridge is told by its command line (`signupd-web --help`).
struct WebConfiguration: Sendable {
    /// signupd's socket.
    var socketPath: String = SocketPath.default
    /// Peers whose `X-Forwarded-For` and `X-Forwarded-Proto` are believed (a reverse proxy
    /// such as nginx), as canonical IP literals. Nobody by default.
    var trustedProxies: Set<String> = []
    /// Origins besides the page's own that may open the WebSocket (`https://example.com`).
    var allowedOrigins: Set<String> = []
    /// WebSockets one address may hold at once (IPv6: its /64), as signupd's
    /// `--max-connections-per-client`.
    var maxWebSocketsPerAddress = 64
    /// Connections the bridge holds at once, HTTP and WebSocket together.
    var maxConnections = 16_384
    /// The largest WebSocket message: signupd's longest line.
    var maxFrameBytes = 65_536
    /// The largest request body (a plain form's POST).
    var maxBodyBytes = 16_384
    /// Cookies carry `Secure` always (`true`), or when the request came over https through a
    /// trusted proxy (`false`).
    var alwaysSecureCookies = false
    /// How long a plain POST waits for signupd's checks and for the signup or login.
    var submitTimeout: Duration = .seconds(30)
}
