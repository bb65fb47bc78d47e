import CSystemd
import UnixIO

#if canImport(Glibc)
import Glibc
#endif

/// The sockets systemd passed to this process (socket activation), and what a previous
/// signupd left in the file descriptor store (connections, handover state).
enum SystemdListenFDs {
    /// The passed listening socket and its `FileDescriptorName=` (nil when not
    /// socket-activated), and the stored descriptors. Unsets `LISTEN_*` so that children
    /// do not inherit them.
    static func take() throws(DaemonError) -> (listener: (fd: Int32, name: String)?, stored: InheritedDescriptors) {
        var names: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
        let count = sd_listen_fds_with_names(1, &names)
        defer {
            if let names {
                var index = 0
                while let name = names[index] {
                    free(name)
                    index += 1
                }
                free(names)
            }
        }
        if count < 0 { throw .startup("sd_listen_fds_with_names failed: \(UnixIO.errnoText(-count))") }
        var listeners: [(fd: Int32, name: String)] = []
        var stored = InheritedDescriptors()
        for index in 0..<Int(count) {
            let fd = SD_LISTEN_FDS_START + Int32(index)
            let name = names?[index].map { String(cString: $0) } ?? "unknown"
            if stored.take(fd: fd, name: name) { continue }
            listeners.append((fd, name))
        }
        if listeners.count > 1 { throw .startup("systemd passed \(listeners.count) sockets; signupd serves exactly one (check ListenStream= in signupd.socket)") }
        guard let listener = listeners.first else {
            if !stored.isEmpty { throw .startup("systemd passed stored descriptors but no listening socket (start signupd.socket)") }
            return (nil, stored)
        }
        guard sd_is_socket_unix(listener.fd, Int32(SOCK_STREAM.rawValue), 1, nil, 0) > 0 else {
            throw .startup("the socket systemd passed is not a listening Unix stream socket")
        }
        return (listener, stored)
    }
}
