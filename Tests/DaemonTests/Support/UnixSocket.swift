import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Thin wrappers over the socket calls the tests need, with errors that say what failed.
enum UnixSocket {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    static func address(_ path: String) -> sockaddr_un {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: Array(path.utf8).prefix(raw.count - 1))
        }
        return address
    }

    static func withAddress<T>(_ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) -> T) -> T {
        var address = address(path)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
    }

    /// A bound, listening stream socket, as systemd would create for signupd.socket.
    static func listen(at path: String) throws -> Int32 {
        unlink(path)
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: \(errno)") }
        guard withAddress(path, { bind(fd, $0, $1) }) == 0 else { throw Failure(description: "bind \(path): \(errno)") }
        guard Glibc.listen(fd, 128) == 0 else { throw Failure(description: "listen: \(errno)") }
        return fd
    }

    /// A bound datagram socket to receive sd_notify messages on.
    static func notifySocket(at path: String) throws -> Int32 {
        unlink(path)
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: \(errno)") }
        guard withAddress(path, { bind(fd, $0, $1) }) == 0 else { throw Failure(description: "bind \(path): \(errno)") }
        return fd
    }

    /// A connected stream socket.
    static func connect(to path: String) throws -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: \(errno)") }
        guard withAddress(path, { Glibc.connect(fd, $0, $1) }) == 0 else {
            let code = errno
            close(fd)
            throw Failure(description: "connect \(path): \(String(cString: strerror(code)))")
        }
        return fd
    }

    /// Makes blocking reads on `fd` give up after `seconds` (a bound, not a synchronisation).
    static func setReceiveTimeout(_ fd: Int32, seconds: Int) {
        var timeout = timeval(tv_sec: seconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }
}
