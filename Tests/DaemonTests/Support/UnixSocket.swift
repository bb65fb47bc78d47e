import Foundation
import UnixIO

#if canImport(Glibc)
import Glibc
#endif

/// Thin wrappers over the socket calls the tests need, with errors that say what failed.
enum UnixSocket {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    static func withAddress(_ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) -> Int32) throws -> Int32 {
        guard let result = UnixIO.withSocketAddress(path, body) else { throw Failure(description: "socket path too long: \(path)") }
        return result
    }

    /// A bound, listening stream socket, as systemd would create for signupd.socket.
    static func listen(at path: String) throws -> Int32 {
        unlink(path)
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: \(errno)") }
        guard try withAddress(path, { bind(fd, $0, $1) }) == 0 else { throw Failure(description: "bind \(path): \(errno)") }
        guard Glibc.listen(fd, 128) == 0 else { throw Failure(description: "listen: \(errno)") }
        return fd
    }

    /// A bound datagram socket to receive sd_notify messages on.
    static func notifySocket(at path: String) throws -> Int32 {
        unlink(path)
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: \(errno)") }
        guard try withAddress(path, { bind(fd, $0, $1) }) == 0 else { throw Failure(description: "bind \(path): \(errno)") }
        return fd
    }

    /// Sends datagrams to the socket at `path` until its queue is full (`EAGAIN`), as a
    /// service manager that has stopped reading leaves its notify socket; returns how many.
    static func fillDatagramQueue(at path: String) throws -> Int {
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: \(errno)") }
        defer { close(fd) }
        var sent = 0
        while true {
            let result = try withAddress(path) { address, length in
                Int32(sendto(fd, "X=1", 3, Int32(MSG_NOSIGNAL), address, length))
            }
            guard result >= 0 else { break }
            sent += 1
        }
        guard errno == EAGAIN || errno == EWOULDBLOCK else { throw Failure(description: "sendto: \(UnixIO.errnoText(errno))") }
        return sent
    }

    /// A connected stream socket.
    static func connect(to path: String) throws -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: \(errno)") }
        guard (try? withAddress(path, { Glibc.connect(fd, $0, $1) })) == 0 else {
            let code = errno
            close(fd)
            throw Failure(description: "connect \(path): \(UnixIO.errnoText(code))")
        }
        return fd
    }

    /// Makes blocking reads on `fd` give up after `seconds` (a bound, not a synchronisation).
    static func setReceiveTimeout(_ fd: Int32, seconds: Int) {
        var timeout = timeval(tv_sec: seconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }
}
