import NIOCore
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
    /// Connections one peer address holds at once (not counting a trusted proxy's, whose
    /// visitors nginx limits).
    var maxConnectionsPerAddress = 256
    /// The largest WebSocket message: signupd's longest line.
    var maxFrameBytes = 65_536
    /// Messages a WebSocket may send a second, and how many at once (then it is read later).
    var framesPerSecond = 50.0
    var frameBurst = 200.0
    /// The same for `describe`, a whole catalogue each.
    var describesPerSecond = 1.0
    var describeBurst = 5.0
    /// How long a request's head and body may take to arrive, and the next one after an answer.
    var requestTimeout: TimeAmount = .seconds(30)
    var keepAliveTimeout: TimeAmount = .seconds(60)
    /// The largest request body (a plain form's POST).
    var maxBodyBytes = 16_384
    /// Cookies carry `Secure` always (`true`), or when the request came over https through a
    /// trusted proxy (`false`).
    var alwaysSecureCookies = false
    var origins: OriginPolicy { OriginPolicy(allowed: allowedOrigins, alwaysHTTPS: alwaysSecureCookies) }
    /// How long a plain POST waits for signupd's checks and for the signup or login.
    var submitTimeout: Duration = .seconds(30)
}
