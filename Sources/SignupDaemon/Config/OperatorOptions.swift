
/// Metrics and administration (issue 26).
struct OperatorOptions {
    /// Its options: names, help and the field each sets (CommandLineOption).
    static var options: [CommandLineOption<Self>] {
        [
            .option("metrics-socket", \.metricsSocket, valueName: "path", help: "Serve metrics (GET /metrics, Prometheus text or OpenMetrics) over HTTP on this Unix socket while signupd runs. The Debian package passes /run/signupd/metrics/metrics.sock, linked from /run/signupd/metrics.sock. (default: none)"),
            .option("metrics-socket-group", \.metricsSocketGroup, valueName: "group", help: "Group that may read the metrics socket (mode 0660); without it the socket is 0600, for signupd's own user. The Debian package names signupd-clients."),
            .option("metrics-listen", \.metricsListen, valueName: "addr:port", help: "Serve metrics over HTTP on TCP too, at ADDR:PORT (e.g. 127.0.0.1:9464, [::1]:9464). Anyone who can reach it can read them. (default: none)"),
            .option("admin-group", \.adminGroup, valueName: "group", help: "Group whose members may pause and resume sign-up and see everything in status and sessions --all, as root may. The Debian package creates signupd-admins (empty) and names it."),
            .option("log-summary-seconds", \.logSummarySeconds, valueName: "seconds", help: "Seconds over which one peer's repeated log event (a refusal, a throttled login, a drop) is summarised: the first 3 are logged, then one line says how many more there were. (default: 60)"),
        ]
    }

    var metricsSocket: String?
    var metricsSocketGroup: String?
    var metricsListen: String?
    var adminGroup: String?
    var logSummarySeconds: Int?

    /// Where metrics are served.
    func metricsListeners() throws -> [MetricsEndpoint.Listener] {
        var listeners: [MetricsEndpoint.Listener] = []
        if let metricsSocket {
            var gid: UInt32?
            if let metricsSocketGroup {
                guard let found = UInt32(metricsSocketGroup) ?? SystemAccounts.gid(ofGroup: metricsSocketGroup) else {
                    throw UsageError("--metrics-socket-group: no group \"\(metricsSocketGroup)\"")
                }
                gid = found
            }
            listeners.append(.unix(path: metricsSocket, group: gid))
        } else if metricsSocketGroup != nil {
            throw UsageError("--metrics-socket-group needs --metrics-socket")
        }
        if let metricsListen { listeners.append(try Self.tcp(metricsListen)) }
        return listeners
    }

    /// Root, and the members of `--admin-group`.
    func administrators() throws -> Administrators {
        var admins = Administrators(uids: [0])
        if let adminGroup {
            guard let gid = UInt32(adminGroup) ?? SystemAccounts.gid(ofGroup: adminGroup) else { throw UsageError("--admin-group: no group \"\(adminGroup)\"") }
            admins.gid = gid
        }
        return admins
    }

    /// `127.0.0.1:9464`, `[::1]:9464`, `localhost:9464`.
    static func tcp(_ text: String) throws -> MetricsEndpoint.Listener {
        let host: Substring
        let port: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { throw UsageError("--metrics-listen: \"\(text)\" has no \"]\" after its IPv6 address") }
            host = text[text.index(after: text.startIndex)..<close]
            let rest = text[text.index(after: close)...]
            guard rest.hasPrefix(":") else { throw UsageError("--metrics-listen: \"\(text)\" is not ADDR:PORT") }
            port = rest.dropFirst()
        } else {
            guard let colon = text.lastIndex(of: ":") else { throw UsageError("--metrics-listen: \"\(text)\" is not ADDR:PORT") }
            host = text[..<colon]
            port = text[text.index(after: colon)...]
            guard !host.contains(":") else { throw UsageError("--metrics-listen: write an IPv6 address in brackets, e.g. [::1]:9464, not \"\(text)\"") }
        }
        guard !host.isEmpty, port.allSatisfy(\.isASCII), port.allSatisfy(\.isNumber), let number = Int(port), (1...65535).contains(number) else {
            throw UsageError("--metrics-listen: \"\(text)\" is not ADDR:PORT with a port from 1 to 65535")
        }
        return .tcp(host: String(host), port: number)
    }

    func validate() throws {
        if let metricsSocket { try BindFailure.checkLength(metricsSocket, option: "--metrics-socket") }
        if let logSummarySeconds { try checkRange("--log-summary-seconds", logSummarySeconds, 1...86400) }
        _ = try metricsListeners()
        _ = try administrators()
    }
}
