import ArgumentParser
import CSystemd
import Logging
import NIOCore
import SignupClient

/// `signupd-web`: the command line.
public struct SignupWebCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "signupd-web",
        abstract: "Serve signupd's forms to browsers: the sign-up page, a plain-HTML fallback and a WebSocket.",
        discussion: """
            A trusted front end of signupd (its user must be in signupd's --trusted-bridge-group, \
            the package's signupd-bridges): every browser is named to signupd by its flow cookie \
            and address, so that signupd's limits count each person, not the bridge.

            Pages: / and /signup, /login, /phone-signup, /phone-login (GET draws the form, POST \
            is the no-script path); GET /whoami, POST /session, POST /logout; the WebSocket \
            at /ws carries signupd's line protocol, one JSON message per text frame.

            Started by systemd (signupd-web.socket), it serves the sockets it is passed and \
            ignores --listen.
            """,
        version: SignupWebVersion.current
    )

    @Option(name: .customLong("listen"), help: ArgumentHelp("Address and port to serve, e.g. 127.0.0.1:8080 or [::1]:8080 (repeatable).", valueName: "ADDR:PORT"))
    var listen: [String] = []

    @Option(name: .customLong("socket"), help: ArgumentHelp("signupd's socket.", valueName: "PATH"))
    var socket: String = SocketPath.default

    @Option(name: .customLong("trusted-proxy"), help: ArgumentHelp("A reverse proxy's IP address whose X-Forwarded-For and X-Forwarded-Proto are believed (repeatable; none by default).", valueName: "IP"))
    var trustedProxies: [String] = []

    @Option(name: .customLong("allowed-origin"), help: ArgumentHelp("Another origin whose pages may open the WebSocket, e.g. https://example.com (repeatable; the page's own origin always may).", valueName: "ORIGIN"))
    var allowedOrigins: [String] = []

    @Option(name: .customLong("max-websockets-per-address"), help: ArgumentHelp("WebSockets one address (IPv6: its /64) may hold at once.", valueName: "N"))
    var maxWebSocketsPerAddress = 64

    @Option(name: .customLong("max-connections"), help: ArgumentHelp("Connections held at once, HTTP and WebSocket together.", valueName: "N"))
    var maxConnections = 16_384

    @Option(name: .customLong("max-connections-per-address"), help: ArgumentHelp("Connections one peer address may hold at once (a --trusted-proxy is not counted: limit visitors at the proxy).", valueName: "N"))
    var maxConnectionsPerAddress = 256

    @Option(name: .customLong("request-timeout"), help: ArgumentHelp("Seconds a request's head and body may take to arrive (a slow client is closed); the next request on a kept-alive connection has twice as long.", valueName: "SECONDS"))
    var requestTimeout = 30

    @Flag(name: .customLong("secure-cookies"), help: "Mark every cookie Secure (behind a TLS proxy that sends no X-Forwarded-Proto).")
    var secureCookies = false

    @Option(name: .customLong("submit-timeout"), help: ArgumentHelp("Seconds a plain POST waits for signupd's checks and its signup or login.", valueName: "SECONDS"))
    var submitTimeout = 30

    public init() {}

    public func validate() throws {
        for address in trustedProxies where !ClientAddressing.isIPLiteral(address) {
            throw ValidationError("--trusted-proxy \(address): not an IP address")
        }
        for origin in allowedOrigins where !(origin.hasPrefix("http://") || origin.hasPrefix("https://")) {
            throw ValidationError("--allowed-origin \(origin): an origin is scheme://host[:port]")
        }
        for address in listen where Self.parseListen(address) == nil {
            throw ValidationError("--listen \(address): expected ADDR:PORT, e.g. 127.0.0.1:8080 or [::1]:8080")
        }
        guard maxWebSocketsPerAddress > 0, maxConnections > 0, maxConnectionsPerAddress > 0, submitTimeout > 0, requestTimeout > 0 else {
            throw ValidationError("limits must be positive")
        }
    }

    public func run() async throws {
        var logger = Logger(label: "signupd-web")
        logger.logLevel = .info
        var configuration = WebConfiguration()
        configuration.socketPath = socket
        configuration.trustedProxies = Set(trustedProxies.map(ClientAddressing.canonical))
        configuration.allowedOrigins = Set(allowedOrigins.map { $0.lowercased() })
        configuration.maxWebSocketsPerAddress = maxWebSocketsPerAddress
        configuration.maxConnections = maxConnections
        configuration.maxConnectionsPerAddress = maxConnectionsPerAddress
        configuration.requestTimeout = .seconds(Int64(requestTimeout))
        configuration.keepAliveTimeout = .seconds(Int64(2 * requestTimeout))
        configuration.alwaysSecureCookies = secureCookies
        configuration.submitTimeout = .seconds(submitTimeout)

        var listeners: [WebServer.Listener] = []
        let passed = csystemd_listen_fds(1)
        if let missing = csystemd_error() {
            logger.critical("cannot start: \(String(cString: missing)) (libsystemd0 is one of signupd's dependencies: apt install libsystemd0)")
            throw ExitCode(1)
        }
        if passed > 0 {
            listeners = (0..<passed).map { .descriptor(CSYSTEMD_LISTEN_FDS_START + $0) }
        } else {
            listeners = (listen.isEmpty ? ["127.0.0.1:8080"] : listen).compactMap(Self.parseListen).map { .address(host: $0.host, port: $0.port) }
        }
        // Whether signupd will let this bridge speak for its visitors, said at start, not at
        // the first visitor's failure.
        let probe = (configuration.socketPath, logger)
        Task {
            do throws(SignupClientError) {
                let connection = try await SignupConnection.connect(to: probe.0, configuration: .init(speaksFor: .init(id: "signupd-web-start")))
                await connection.close()
                probe.1.info("signupd at \(probe.0) trusts this bridge to speak for its visitors")
            } catch .refused(let refusal) where refusal.code == .known(.forbidden) {
                NotTrusted.report(refusal.message, logger: probe.1)
            } catch {
                probe.1.warning("signupd is not reachable at \(probe.0) yet: \(error)")
            }
        }
        let server = WebServer(configuration: configuration, logger: logger)
        let (log, socketPath) = (logger, configuration.socketPath)
        try await server.run(listeners) { address in
            log.info("serving \(address.map { "\($0)" } ?? "a passed socket") for signupd at \(socketPath)")
        }
    }

    static func parseListen(_ text: String) -> (host: String, port: Int)? {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]), (0...65535).contains(port) else { return nil }
        var host = String(text[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard ClientAddressing.isIPLiteral(host) else { return nil }
        return (host, port)
    }
}
