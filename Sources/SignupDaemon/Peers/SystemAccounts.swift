#if canImport(Glibc)
import Glibc
#endif

/// Names in the system's user and group databases (NSS), for options naming them.
enum SystemAccounts {
    static func uid(ofUser name: String) -> UInt32? {
        ids(ofUser: name)?.uid
    }

    /// A user's uid and primary group.
    static func ids(ofUser name: String) -> (uid: UInt32, gid: UInt32)? {
        var entry = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 16384)
        guard getpwnam_r(name, &entry, &buffer, buffer.count, &result) == 0, result != nil else { return nil }
        return (entry.pw_uid, entry.pw_gid)
    }

    static func gid(ofGroup name: String) -> UInt32? {
        var entry = group()
        var result: UnsafeMutablePointer<group>?
        var buffer = [CChar](repeating: 0, count: 65536)
        guard getgrnam_r(name, &entry, &buffer, buffer.count, &result) == 0, result != nil else { return nil }
        return entry.gr_gid
    }
}
