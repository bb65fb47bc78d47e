import UnixIO

#if canImport(Glibc)
import Glibc
#endif

/// Whom the operator's forms and catalogues are checked for: signupd itself when it loads
/// them, or, for `signupd --check-config` run by root, the service that will (the running
/// one of `--check-config-of PID`, else the package's `signupd` user). Root may read and own
/// what the service may not: checked as root, a signupd-owned catalogue was refused and a
/// root-only one (0600) passed, and `systemctl reload` then did the opposite (helper-49).
struct ConfigReader: Sendable, Equatable {
    var uid: uid_t
    /// The primary group first, then the supplementary ones.
    var groups: [gid_t]

    /// For `--check-config`: the process `pid`'s identity when given, else, when run by
    /// root, the package's `signupd` user (with its groups); else this process.
    static func forCheck(of pid: Int?) throws(DaemonError) -> ConfigReader {
        if let pid {
            let path = "/proc/\(pid)/status"
            guard let bytes = UnixIO.readToEnd(path), let reader = parseStatus(String(decoding: bytes, as: UTF8.self)) else {
                throw .startup("--check-config-of \(pid): cannot read who the process runs as (\(path))")
            }
            return reader
        }
        guard geteuid() == 0, let service = SystemAccounts.ids(ofUser: "signupd") else { return ConfigReader(uid: geteuid(), groups: [getegid()]) }
        var groups = [gid_t](repeating: 0, count: 256)
        var count = Int32(groups.count)
        guard getgrouplist("signupd", service.gid, &groups, &count) >= 0 else { return ConfigReader(uid: service.uid, groups: [service.gid]) }
        return ConfigReader(uid: service.uid, groups: [service.gid] + groups.prefix(Int(count)).filter { $0 != service.gid })
    }

    /// The effective uid and gid and the supplementary groups of a `/proc/PID/status` text.
    static func parseStatus(_ text: String) -> ConfigReader? {
        var uid: uid_t?
        var gid: gid_t?
        var groups: [gid_t] = []
        for line in text.split(separator: "\n") {
            let fields = line.split(whereSeparator: { $0 == "\t" || $0 == " " })
            switch fields.first {
            case "Uid:" where fields.count > 2: uid = uid_t(fields[2])
            case "Gid:" where fields.count > 2: gid = gid_t(fields[2])
            case "Groups:": groups = fields.dropFirst().compactMap { gid_t($0) }
            default: break
            }
        }
        guard let uid, let gid else { return nil }
        return ConfigReader(uid: uid, groups: [gid] + groups.filter { $0 != gid })
    }

    /// Whether this reader is another user than this process (whose own opens say what it
    /// may read).
    var isSomeoneElse: Bool { uid != geteuid() }

    /// Why this reader could not read (`search`: list and enter, for a directory) what
    /// `info` describes, by its mode bits; nil when it could. Root reads everything.
    func refusal(_ info: stat, directory: Bool) -> String? {
        guard uid != 0 else { return nil }
        let (read, search): (mode_t, mode_t) =
            if info.st_uid == uid { (S_IRUSR, S_IXUSR) } else if groups.contains(info.st_gid) { (S_IRGRP, S_IXGRP) } else { (S_IROTH, S_IXOTH) }
        let needed = directory ? read | search : read
        guard info.st_mode & needed != needed else { return nil }
        let mode = String(info.st_mode & 0o7777, radix: 8)
        return "uid \(uid) that signupd runs as cannot \(directory ? "list" : "read") it (mode 0\(mode), owner uid \(info.st_uid), group \(info.st_gid)); "
            + "the service would fail with Permission denied: chmod \(directory ? "a+rx" : "a+r") it, or give it to that user's group"
    }
}
