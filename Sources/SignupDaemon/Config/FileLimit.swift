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
}
