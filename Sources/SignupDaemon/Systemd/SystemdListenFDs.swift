import CSystemd
import UnixIO

#if canImport(Glibc)
import Glibc
#endif

/// The sockets systemd passed to this process (socket activation).
enum SystemdListenFDs {
    /// The first passed socket and its `FileDescriptorName=`, or nil when not socket-activated.
    /// Unsets `LISTEN_*` so that children do not inherit them.
    static func take() throws(DaemonError) -> (fd: Int32, name: String)? {
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
        if count == 0 { return nil }
        if count > 1 { throw .startup("systemd passed \(count) sockets; signupd serves exactly one (check ListenStream= in signupd.socket)") }
        let fd = SD_LISTEN_FDS_START
        guard sd_is_socket_unix(fd, Int32(SOCK_STREAM.rawValue), 1, nil, 0) > 0 else {
            throw .startup("the socket systemd passed is not a listening Unix stream socket")
        }
        let name = names?[0].map { String(cString: $0) } ?? "unknown"
        return (fd, name)
    }
}
