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

    /// The longest path a Unix socket's address holds: `sun_path` less its terminating NUL.
    public static var maxSocketPathBytes: Int { MemoryLayout.size(ofValue: sockaddr_un().sun_path) - 1 }

    /// Where the symbolic link at `path` points (`readlink`); nil when it is not one.
    public static func readLink(_ path: String) -> String? {
        var buffer = [UInt8](repeating: 0, count: Int(PATH_MAX))
        let length = buffer.withUnsafeMutableBytes { readlink(path, $0.baseAddress!.assumingMemoryBound(to: CChar.self), $0.count - 1) }
        return length > 0 ? String(decoding: buffer[..<length], as: UTF8.self) : nil
    }

    /// The whole of a file read to its end, for those whose size says nothing (/proc's);
    /// nil, with errno set, when it cannot be opened.
    public static func readToEnd(_ path: String) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { return bytes }
            bytes += chunk[..<count]
        }
    }

    /// Calls `body` with the `sockaddr_un` of a Unix socket path, or returns nil when the
    /// path does not fit one (`maxSocketPathBytes`).
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
