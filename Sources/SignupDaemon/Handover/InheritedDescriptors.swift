#if canImport(Glibc)
import Glibc
#endif

/// What a previous signupd left in the file descriptor store, as passed to this process
/// (`LISTEN_FDS`/`LISTEN_FDNAMES`, after the socket unit's listener).
struct InheritedDescriptors: Sendable {
    /// The handover state memfd, if the previous process wrote one.
    var state: Int32?
    /// Client connections by `FDNAME=`.
    var connections: [(name: String, fd: Int32)] = []
    /// Descriptors with names signupd never gives (closed and dropped from the store).
    var unknown: [(name: String, fd: Int32)] = []

    var isEmpty: Bool { state == nil && connections.isEmpty && unknown.isEmpty }

    /// Closes every one: what a process that does not hand over (not under systemd) was
    /// passed is not kept open unused.
    func closeAll() {
        for fd in (state.map { [$0] } ?? []) + connections.map(\.fd) + unknown.map(\.fd) { close(fd) }
    }

    /// Sorts a stored descriptor by its name; false when the name is not a stored one.
    mutating func take(fd: Int32, name: String) -> Bool {
        if name == DescriptorStore.stateName {
            if let old = state { unknown.append((name, old)) }
            state = fd
        } else if name.hasPrefix(DescriptorStore.connectionPrefix) {
            connections.append((name, fd))
        } else {
            return false
        }
        return true
    }
}
