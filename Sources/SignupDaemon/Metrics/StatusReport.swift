import NIOCore
import SignupProtocol

#if canImport(Glibc)
import Glibc
#endif

/// The answer to `status` (issue 26), as `signupctl status` shows it. Administrators (root,
/// `--admin-group`) see everything; anyone else sees the daemon's health and their own
/// share — never other users' uids, counts or rates.
enum StatusReport {
    static func build(context: ConnectionHandler.Context, caller: Principal, administrator: Bool) -> JSONObject {
        let services = context.services
        let now = NIODeadline.now()
        var report = Members()
        report["scope"] = .string(administrator ? "all" : "own")
        report["version"] = .string(context.serverName)
        report["pid"] = .int(Int(getpid()))
        report["uptimeSeconds"] = .int(Int((now - context.started).nanoseconds / 1_000_000_000))
        report["store"] = .object(storeHealth(services.accounts.store, description: context.storeDescription, administrator: administrator))
        if let http = services.http {
            var service = Members()
            service["url"] = .string(http.serviceName)
            let failing = http.health.withLockedValue { $0.failing }
            service["healthy"] = .bool(failing == nil)
            if let failing { service["cause"] = .string(failing) }
            report["availabilityService"] = .object(service.object)
        }
        // Once the phone-number library was looked at (just after start): whether phone
        // rules can check numbers, or why they refuse every one (PhoneLibrary).
        if let looked = PhoneLibrary.looked {
            var phone = Members()
            phone["healthy"] = .bool(looked == nil)
            // Why, with its paths, for administrators (as the store's location); others are
            // told where to look (helper-33).
            if let looked { phone["cause"] = .string(administrator ? looked.description : "the phone-number library cannot be used; the journal, and status for an administrator, say why") }
            if administrator, let library = PhoneLibrary.library { phone["library"] = .string(library) }
            report["phoneNumbers"] = .object(phone.object)
        }
        var paused = Members()
        if let pause = services.signupPause.current {
            paused["paused"] = .bool(true)
            if let note = pause.note { paused["message"] = .string(note) }
            paused["since"] = .int(Int(pause.since))
            if administrator { paused["byUid"] = .int(Int(pause.byUID)) }
        } else {
            paused["paused"] = .bool(false)
        }
        report["signups"] = .object(paused.object)
        var forms = Members()
        if let fallback = services.forms.fallback {
            forms["source"] = .string("last-good")
            forms["errors"] = .int(fallback.errorCount)
            // Where and what: the operator's files, administrators only.
            if administrator { forms["firstError"] = .string(fallback.firstError) }
            forms["savedAt"] = .int(Int(fallback.savedAt))
        } else {
            forms["source"] = .string("forms.d")
        }
        report["forms"] = .object(forms.object)
        var own = Members()
        own["uid"] = .int(Int(caller.uid))
        if let client = caller.client { own["client"] = .string(client) }
        own["connections"] = .int(services.registry.connections(of: caller.key))
        own["sessions"] = .int(services.directory.count(ownedBy: caller.owner))
        report["own"] = .object(own.object)
        guard administrator else { return report.object }

        let levels = services.levels
        report["connections"] = .int(levels.connections)
        report["sessions"] = .int(levels.sessions)
        report["detachedSessions"] = .int(levels.detachedSessions)
        var queues = Members()
        queues["hashQueueDepth"] = .int(levels.hashQueueDepth)
        queues["bufferedBytes"] = .int(levels.bufferedBytes)
        queues["bufferedBytesBudget"] = .int(levels.bufferBudget)
        queues["hashQueueLimit"] = .int(services.accounts.hashQueue.maxTotal)
        report["queues"] = .object(queues.object)
        report["rates"] = .array(services.activity.rates().map { rate in
            var item = Members()
            item["action"] = .string(rate.action)
            item["outcome"] = .string(rate.outcome)
            item["last1m"] = .int(rate.last1)
            item["last5m"] = .int(rate.last5)
            item["last15m"] = .int(rate.last15)
            return .object(item.object)
        })
        let exposition = services.metrics.exposition()
        var latency = Members()
        latency["validation"] = .object(quantiles(HistogramQuantiles(metric: DaemonMetrics.Name.validation, in: exposition)))
        latency["hash"] = .object(quantiles(HistogramQuantiles(metric: DaemonMetrics.Name.hashSeconds, in: exposition)))
        latency["availabilityCheck"] = .object(quantiles(HistogramQuantiles(metric: DaemonMetrics.Name.availabilitySeconds, in: exposition)))
        report["latency"] = .object(latency.object)
        report["busiest"] = .array(busiest(services: services, limit: 5))
        return report.object
    }

    private static func storeHealth(_ store: any AccountStore, description: String, administrator: Bool) -> JSONObject {
        var health = Members()
        // Its kind for everyone; where it is (a path, a URL without password) tells others
        // nothing they need: administrators only.
        let parts = description.split(separator: " ", maxSplits: 1).map(String.init)
        health["store"] = .string(parts.first ?? description)
        if administrator, parts.count > 1 { health["location"] = .string(parts[1]) }
        if let postgres = store as? PostgresAccountStore {
            switch postgres.breaker.withLockedValue({ $0.state }) {
            case .closed:
                health["healthy"] = .bool(true)
            case .open(let cause, _), .trial(let cause):
                health["healthy"] = .bool(false)
                health["cause"] = .string(cause)
            }
        } else {
            health["healthy"] = .bool(true)
        }
        return health.object
    }

    private static func quantiles(_ figures: HistogramQuantiles) -> JSONObject {
        var members = Members()
        members["count"] = .int(figures.count)
        if let p50 = figures.p50 { members["p50Ms"] = .milliseconds(p50) }
        if let p99 = figures.p99 { members["p99Ms"] = .milliseconds(p99) }
        return members.object
    }

    /// The peers holding the most connections and sessions (front ends' clients apart), with
    /// what their connections buffer (`--max-buffered-bytes` drops the biggest holder first).
    private static func busiest(services: SessionServices, limit: Int) -> [JSONValue] {
        let connections = services.registry.countsByPeer()
        let sessions = services.directory.countsByPeer()
        var buffered: [PeerKey: Int] = [:]
        for connection in services.registry.allConnections { buffered[connection.principal.key, default: 0] += connection.heldBytes }
        let peers = Set(connections.keys).union(sessions.keys)
        let ranked = peers.map { ($0, connections[$0] ?? 0, sessions[$0] ?? 0) }
            .sorted { ($0.1 + $0.2, $1.0.description) > ($1.1 + $1.2, $0.0.description) }
            .prefix(limit)
        return ranked.map { peer, connections, sessions in
            var item = Members()
            item["uid"] = .int(Int(peer.uid))
            if peer.client != nil { item["peer"] = .string(peer.description) }
            item["connections"] = .int(connections)
            item["sessions"] = .int(sessions)
            item["bufferedBytes"] = .int(max(0, buffered[peer] ?? 0))
            return .object(item.object)
        }
    }

    /// An object built member by member, in order.
    private struct Members {
        private(set) var object = JSONObject()

        subscript(key: String) -> JSONValue? {
            get { object[key] }
            set {
                guard let newValue else { return }
                object.members.append(.init(key: key, value: newValue))
            }
        }
    }
}

extension JSONValue {
    fileprivate static func int(_ value: Int) -> JSONValue { .number("\(value)") }

    /// Seconds as milliseconds with three decimals.
    fileprivate static func milliseconds(_ seconds: Double) -> JSONValue {
        let micro = Int((seconds * 1_000_000).rounded())
        let fraction = String(micro % 1000)
        return .number("\(micro / 1000).\(String(repeating: "0", count: 3 - fraction.count))\(fraction)")
    }
}
