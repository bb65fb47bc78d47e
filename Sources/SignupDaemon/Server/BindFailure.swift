import NIOCore
import UnixIO

/// Why a socket could not be bound, in words an administrator acts on: the path or
/// address, and the system's reason (NIO's own text named its internal call:
/// `bind(descriptor:ptr:bytes:): Permission denied) (errno: 13)`; helper-42).
enum BindFailure {
    static func describe(_ error: any Error, at place: String) -> String {
        switch error {
        case let error as IOError: "cannot bind \(place): \(UnixIO.errnoText(error.errnoCode))"
        case SocketAddressError.unixDomainSocketPathTooLong: "cannot bind \(place): \(tooLong(place))"
        default: "cannot bind \(place): \(error)"
        }
    }

    /// Refuses a Unix socket path its address cannot hold, naming the option.
    static func checkLength(_ path: String, option: String) throws {
        guard path.utf8.count > UnixIO.maxSocketPathBytes else { return }
        throw UsageError("\(option): \(tooLong(path))")
    }

    private static func tooLong(_ path: String) -> String {
        "the path is \(path.utf8.count) bytes; a Unix socket's path holds at most \(UnixIO.maxSocketPathBytes)"
    }
}
