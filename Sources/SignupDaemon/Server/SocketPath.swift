import UnixIO

#if canImport(Glibc)
import Glibc
#endif

/// Checks a socket path before binding it ourselves.
enum SocketPath {
    /// Refuses a path a live daemon serves; removes a stale socket file left by a dead one.
    static func prepare(_ path: String) throws(DaemonError) {
        var info = stat()
        guard lstat(path, &info) == 0 else { return }  // nothing there
        guard (info.st_mode & S_IFMT) == S_IFSOCK else {
            throw .startup("\(path) exists and is not a socket; refusing to replace it")
        }
        if isServed(path) {
            throw .startup("another signupd is already serving \(path); stop it first or pass another --socket")
        }
        guard unlink(path) == 0 else {
            throw .startup("cannot remove the stale socket \(path): \(UnixIO.errnoText(errno))")
        }
    }

    /// Whether something accepts connections on the socket at `path`.
    static func isServed(_ path: String) -> Bool {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        return UnixIO.withSocketAddress(path) { connect(fd, $0, $1) } == 0
    }
}
