import CSystemd
import FormEngine
import NIOCore
import UnixIO

#if canImport(Glibc)
import Glibc
#endif

/// systemd's file descriptor store (`FileDescriptorStoreMax=` in signupd.service), and the
/// sealed memfd the handover state travels in. All calls are no-ops without `$NOTIFY_SOCKET`.
enum DescriptorStore {
    /// `FDNAME=` of the handover state.
    static let stateName = "handover-state"
    /// `FDNAME=` prefix of stored client connections.
    static let connectionPrefix = "c."

    /// Stores a duplicate of `fd` under `name`.
    @discardableResult
    static func add(_ fd: Int32, name: String) -> Bool {
        csystemd_fdstore_add(fd, name) > 0
    }

    /// Drops every stored descriptor named `name` (systemd closes its duplicate).
    static func remove(_ name: String) {
        _ = csystemd_fdstore_remove(name)
    }

    /// Waits until systemd has processed every message sent so far (or the timeout passed).
    static func barrier(timeout: Duration = .seconds(5)) {
        _ = csystemd_notify_barrier(0, UInt64(timeout.components.seconds) * 1_000_000)
    }

    /// Asks for more time to start or stop (`EXTEND_TIMEOUT_USEC=`).
    static func extendTimeout(by duration: Duration) {
        _ = csystemd_notify(0, "EXTEND_TIMEOUT_USEC=\(UInt64(duration.components.seconds) * 1_000_000)")
    }

    /// A sealed memfd holding `bytes`: in memory only, unchangeable once made.
    static func sealedMemfd(_ bytes: [UInt8]) throws(HandoverStateError) -> Int32 {
        let fd = bytes.withUnsafeBytes { csystemd_sealed_memfd("signupd-handover", $0.baseAddress, $0.count) }
        guard fd >= 0 else { throw .unreadable("memfd_create/F_ADD_SEALS: \(UnixIO.errnoText(-fd))") }
        return fd
    }

    /// The whole content of a sealed memfd; refuses anything that is not one (a file could
    /// change while read, and must never hold the state).
    static func readSealed(_ fd: Int32, limit: Int = HandoverCodec.maxReadBytes) throws(HandoverStateError) -> [UInt8] {
        let seals = csystemd_seals(fd)
        guard seals >= 0, csystemd_fully_sealed(seals) != 0 else { throw .unreadable("not a sealed memfd") }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw .unreadable("fstat: \(UnixIO.errnoText(errno))") }
        let size = Int(info.st_size)
        guard size <= limit else { throw .unreadable("\(size) bytes is more than the \(limit) a state may have") }
        var bytes = [UInt8](repeating: 0, count: size)
        var done = 0
        while done < size {
            let n = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + done, size - done, off_t(done)) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { throw .unreadable(n == 0 ? "ends early" : "pread: \(UnixIO.errnoText(errno))") }
            done += n
        }
        return bytes
    }

    /// The kernel's cookie of the socket behind `channel` (SO_COOKIE).
    static func cookie(of channel: Channel) -> UInt64? {
        guard let provider = channel as? SocketOptionProvider else { return nil }
        let future: EventLoopFuture<UInt64> = provider.unsafeGetSocketOption(level: SocketOptionLevel(SOL_SOCKET), name: SocketOptionName(57))  // SO_COOKIE
        var cookie: UInt64?
        // On the channel's own loop the future is already complete.
        future.assumeIsolated().whenSuccess { cookie = $0 }
        return cookie
    }

    /// The cookie of `fd`, if it is a socket.
    static func cookie(ofDescriptor fd: Int32) -> UInt64? {
        var cookie: UInt64 = 0
        return csystemd_socket_cookie(fd, &cookie) == 0 ? cookie : nil
    }
}
