import Logging
import UnixIO

#if canImport(Glibc)
import Glibc
#endif

/// Raises the soft open-file limit to the hard one, so that thousands of clients fit.
enum FileLimit {
    static func raise(logger: Logger) {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return }
        guard limit.rlim_cur < limit.rlim_max else { return }
        let previous = limit.rlim_cur
        limit.rlim_cur = limit.rlim_max
        if setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) != 0 {
            logger.warning("cannot raise the open-file limit", metadata: ["soft": "\(previous)", "error": "\(UnixIO.errnoText(errno))"])
        } else {
            logger.debug("open-file limit raised", metadata: ["from": "\(previous)", "to": "\(limit.rlim_max)"])
        }
    }

    /// Descriptors kept for everything but clients: the listener, the store's files, the
    /// event loops' and thread pools' own, outbound HTTP connections, the journal.
    static let reserved = 128

    /// Raises the soft limit, then fits the connection limits into it: past what the
    /// descriptors can hold, accept() would fail for everyone (other users included)
    /// instead of the biggest uid being refused. Warns when it has to lower them.
    static func fit(_ configuration: inout DaemonConfiguration, logger: Logger) {
        raise(logger: logger)
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur != rlim_t.max else { return }
        let (total, perUID) = fitted(maxConnections: configuration.maxConnections, maxConnectionsPerUID: configuration.maxConnectionsPerUID, openFiles: Int(clamping: limit.rlim_cur))
        guard total < configuration.maxConnections else { return }
        logger.warning(
            "the open-file limit cannot hold --max-connections: fewer clients are admitted (raise LimitNOFILE= or ulimit -n)",
            metadata: [
                "open-files": "\(limit.rlim_cur)", "max-connections": "\(configuration.maxConnections)", "admitted": "\(total)",
                "max-connections-per-user": "\(configuration.maxConnectionsPerUID)", "admitted-per-user": "\(perUID)",
            ]
        )
        configuration.maxConnections = total
        configuration.maxConnectionsPerUID = perUID
    }

    /// The connection limits that fit `openFiles` descriptors with `reserved` kept back;
    /// the per-uid limit keeps its share of the total, so others still have room.
    static func fitted(maxConnections: Int, maxConnectionsPerUID: Int, openFiles: Int) -> (total: Int, perUID: Int) {
        let room = max(1, openFiles - reserved)
        guard room < maxConnections else { return (maxConnections, maxConnectionsPerUID) }
        let perUID = max(1, Int((Double(maxConnectionsPerUID) * Double(room) / Double(maxConnections)).rounded(.down)))
        return (room, min(perUID, room))
    }
}
