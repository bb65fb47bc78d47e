import CSystemd
import UnixIO

#if canImport(Glibc)
import Glibc
#endif

/// The sockets systemd passed to this process (socket activation), and what a previous
/// signupd left in the file descriptor store (connections, handover state).
///
/// Read here rather than with libsystemd's sd_listen_fds_with_names(3), whose protocol it
/// follows (LISTEN_PID, LISTEN_FDS, LISTEN_FDNAMES; descriptors from 3, close-on-exec,
/// the variables unset): that was the only libsystemd call before the first `hello`, and
/// without it a start outside systemd's notify and journal (systemd-socket-activate, a
/// start by hand) never opens libsystemd at all (issue 29, the cold start; csystemd.c).
enum SystemdListenFDs {
    /// The passed listening socket and its `FileDescriptorName=` (nil when not
    /// socket-activated), and the stored descriptors. Unsets `LISTEN_*` so that children
    /// do not inherit them.
    static func take() throws(DaemonError) -> (listener: (fd: Int32, name: String)?, stored: InheritedDescriptors) {
        let passed: [(fd: Int32, name: String)]
        do {
            var limit = rlimit()
            let most = getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 ? Int(clamping: limit.rlim_cur) : 1 << 20
            passed = try Passed.parse(
                pid: DefaultPaths.environment("LISTEN_PID"), fds: DefaultPaths.environment("LISTEN_FDS"),
                names: DefaultPaths.environment("LISTEN_FDNAMES"), ownPID: getpid(), mostDescriptors: most)
        } catch {
            unsetAll()
            throw .startup("systemd's LISTEN_* variables are malformed: \(error.reason)")
        }
        unsetAll()
        var listeners: [(fd: Int32, name: String)] = []
        var stored = InheritedDescriptors()
        for (fd, name) in passed {
            // As sd_listen_fds: nothing passed is inherited by a program signupd runs.
            guard fcntl(fd, F_SETFD, FD_CLOEXEC) == 0 else { throw .startup("descriptor \(fd) from systemd: \(UnixIO.errnoText())") }
            if stored.take(fd: fd, name: name) {
                // Of the kind its name says: a descriptor of this process's own (the runtime's
                // epoll, which LISTEN_FDS can name when forged) is never taken for a client's
                // connection (helper-44: it was written to and closed, and the process died).
                let kind = name == DescriptorStore.stateName ? Kind.memory : Kind.connection
                guard kind.matches(fd) else {
                    throw .startup("descriptor \(fd) from systemd, named \(name.prefix(64)), is not \(kind.description) (or was never passed: LISTEN_FDS counts more than systemd gave)")
                }
                continue
            }
            listeners.append((fd, name))
        }
        if listeners.count > 1 { throw .startup("systemd passed \(listeners.count) sockets; signupd serves exactly one (check ListenStream= in signupd.socket)") }
        guard let listener = listeners.first else {
            if !stored.isEmpty { throw .startup("systemd passed stored descriptors but no listening socket (start signupd.socket)") }
            return (nil, stored)
        }
        guard isListeningUnixStream(listener.fd) else {
            throw .startup("the socket systemd passed is not a listening Unix stream socket")
        }
        return (listener, stored)
    }

    private static func unsetAll() {
        for name in ["LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES"] { unsetenv(name) }
    }

    /// What a stored descriptor must be: the handover state is a memfd (a regular file to
    /// fstat), a carried connection a connected Unix stream socket.
    enum Kind {
        case memory, connection

        var description: String {
            switch self {
            case .memory: "a memory file"
            case .connection: "a connected Unix stream socket"
            }
        }

        func matches(_ fd: Int32) -> Bool {
            switch self {
            case .memory:
                var status = stat()
                return fstat(fd, &status) == 0 && status.st_mode & S_IFMT == S_IFREG
            case .connection:
                return isUnixStream(fd, listening: false)
            }
        }
    }

    /// sd_is_socket_unix(fd, SOCK_STREAM, 1, NULL, 0): a socket, of stream type, listening,
    /// in the Unix family.
    static func isListeningUnixStream(_ fd: Int32) -> Bool {
        isUnixStream(fd, listening: true)
    }

    private static func isUnixStream(_ fd: Int32, listening: Bool) -> Bool {
        var status = stat()
        guard fstat(fd, &status) == 0, status.st_mode & S_IFMT == S_IFSOCK else { return false }
        func option(_ name: Int32) -> Int32? {
            var value: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            return getsockopt(fd, SOL_SOCKET, name, &value, &length) == 0 ? value : nil
        }
        guard option(SO_TYPE) == Int32(SOCK_STREAM.rawValue), option(SO_ACCEPTCONN) == (listening ? 1 : 0) else { return false }
        var address = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return named == 0 && Int32(address.ss_family) == AF_UNIX
    }

    /// What LISTEN_PID, LISTEN_FDS and LISTEN_FDNAMES say, as sd_listen_fds_with_names
    /// reads them: nothing unless LISTEN_PID is this process; `unknown` for every name
    /// when LISTEN_FDNAMES is absent.
    enum Passed {
        struct Malformed: Error, Equatable {
            let reason: String
        }

        /// `mostDescriptors`: the process's descriptor limit. No more can have been passed,
        /// and a forged count above it is refused before anything is made for it.
        static func parse(pid: String?, fds: String?, names: String?, ownPID: pid_t, mostDescriptors: Int) throws(Malformed) -> [(fd: Int32, name: String)] {
            guard let pid else { return [] }
            guard let listenPID = decimal(pid), listenPID > 0, listenPID <= Int(Int32.max) else { throw Malformed(reason: "LISTEN_PID=\(pid.prefix(32)) is not a process id") }
            guard listenPID == Int(ownPID) else { return [] }
            guard let fds else { return [] }
            guard let count = decimal(fds), count <= Int(Int32.max) - Int(CSYSTEMD_LISTEN_FDS_START) else {
                throw Malformed(reason: "LISTEN_FDS=\(fds.prefix(32)) is not a count")
            }
            if count == 0 { return [] }
            guard count <= mostDescriptors - Int(CSYSTEMD_LISTEN_FDS_START) else {
                throw Malformed(reason: "LISTEN_FDS=\(count) is more descriptors than this process may hold (\(mostDescriptors))")
            }
            var given = Array(repeating: "unknown", count: count)
            if let names {
                let split = names.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
                guard split.count == count else {
                    throw Malformed(reason: "LISTEN_FDNAMES names \(split.count) descriptor\(split.count == 1 ? "" : "s"), LISTEN_FDS=\(count)")
                }
                given = split
            }
            return given.enumerated().map { (CSYSTEMD_LISTEN_FDS_START + Int32($0.offset), $0.element) }
        }

        /// Digits only (no sign, no space), as systemd writes them.
        private static func decimal(_ text: String) -> Int? {
            guard !text.isEmpty, text.utf8.count <= 10, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
            return Int(text)
        }
    }
}
