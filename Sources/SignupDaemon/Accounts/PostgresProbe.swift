import FormEngine
import NIOCore
import NIOPosix

/// Asks whether PostgreSQL accepts connections at all: a bare TCP (or Unix socket) connect,
/// closed at once. It tells "connection refused by host:port" from "did not answer", which
/// a query waiting in the pool cannot.
///
/// Probes run in tasks of their own that can outlive the daemon's event loops (a call
/// refused while the server was down starts one, and the daemon may be stopping then): they
/// connect on NIO's process-wide group, which is never shut down. On the daemon's, a probe
/// started after its shutdown left a promise unfulfilled, which a debug build traps on
/// ("leaking promise": store_fairness.py --postgres exited -4 in 2 of 17 runs).
struct PostgresProbe: Sendable {
    /// `host:port`, or the socket path: what logs and errors name.
    let endpoint: String
    private let url: PostgresURL
    private let group: any EventLoopGroup
    private let timeout: TimeAmount

    init(url: PostgresURL, group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton, timeout: Duration) {
        self.url = url
        self.group = group
        self.endpoint = url.isUnixSocket ? url.unixSocketPath : "\(url.host):\(url.port)"
        self.timeout = .nanoseconds(timeout.nanoseconds)
    }

    private func connect(within limit: TimeAmount) -> EventLoopFuture<any Channel> {
        let bootstrap = ClientBootstrap(group: group).connectTimeout(limit)
        return url.isUnixSocket ? bootstrap.connect(unixDomainSocketPath: url.unixSocketPath) : bootstrap.connect(host: url.host, port: url.port)
    }

    private func cause(_ error: any Error) -> String {
        let text = "\(error)"
        if text.contains("Connection refused") || text.contains("ECONNREFUSED") { return "connection refused by \(endpoint)" }
        if error is ChannelError { return "no answer from \(endpoint) within \(timeout.nanoseconds / 1_000_000) ms" }
        if text.contains("No such file") { return "no PostgreSQL socket at \(endpoint)" }
        return "cannot connect to \(endpoint): \(text)"
    }

    /// nil: the server accepts connections; else why not.
    func reach() async -> String? {
        await reach(within: timeout)
    }

    /// `reach()` after a call already waited its timeout: at most a second more.
    func reachAfterTimeout() async -> String? {
        await reach(within: min(timeout, .seconds(1)))
    }

    private func reach(within limit: TimeAmount) async -> String? {
        do {
            let channel = try await connect(within: limit).get()
            try? await channel.close()
            return nil
        } catch {
            return cause(error)
        }
    }
}
