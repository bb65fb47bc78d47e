#if canImport(Glibc)
import Glibc
#endif

/// The few POSIX helpers the daemon, signupctl and the tests share. A target of its own
/// because `Protocol` stays free of system calls (any Swift client on any platform can use
/// it) and signupctl must not depend on the daemon.
public enum UnixIO {
    /// `strerror` of an errno value (by default the current one).
    public static func errnoText(_ code: Int32 = errno) -> String {
        String(cString: strerror(code))
    }

    /// Writes all of `bytes`, retrying after signals and short writes. On a socket it never
    /// raises SIGPIPE. Returns nil when all was written, else the errno of the failure
    /// (0 when the file took no more bytes).
    @discardableResult
    public static func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Int32? {
        var offset = 0
        var isSocket = true
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { chunk in
                isSocket ? send(fd, chunk.baseAddress, chunk.count, Int32(MSG_NOSIGNAL)) : write(fd, chunk.baseAddress, chunk.count)
            }
            if written < 0 && errno == EINTR { continue }
            if written < 0 && errno == ENOTSOCK && isSocket {
                isSocket = false
                continue
            }
            guard written > 0 else { return written < 0 ? errno : 0 }
            offset += written
        }
        return nil
    }

    /// Calls `body` with the `sockaddr_un` of a Unix socket path, or returns nil when the
    /// path does not fit one (108 bytes with its terminator).
    public static func withSocketAddress<T>(_ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) throws -> T) rethrows -> T? {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return nil }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        return try withUnsafePointer(to: &address) {
            try $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { try body($0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
    }
}
