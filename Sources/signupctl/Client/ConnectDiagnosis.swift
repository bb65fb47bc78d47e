import UnixIO

#if canImport(Glibc)
import Glibc
#endif

/// Why `connect(2)` to the socket failed, said so that the reader knows what to do next.
enum ConnectDiagnosis {
    /// The failure for `connect` having failed with `error` on `path`.
    static func failure(path: String, errno error: Int32) -> CommandFailure {
        var info = stat()
        let exists = stat(path, &info) == 0
        if exists && (info.st_mode & S_IFMT) != S_IFSOCK {
            return CommandFailure(
                .unreachable,
                Say.pick("\(path) is \(kind(info.st_mode)), not a socket: check --socket or SIGNUPD_SOCKET", "\(path) 不是套接字：请检查 --socket 或 SIGNUPD_SOCKET"),
                code: "not_a_socket")
        }
        switch error {
        case ENOENT, ENOTDIR:
            return CommandFailure(
                .unreachable,
                Say.pick(
                    "signupd is not running: no socket at \(path) (start it with `systemctl start signupd.socket`; if it was running, `systemctl status signupd.socket signupd.service` and `journalctl -u signupd` say why it stopped; or point --socket / SIGNUPD_SOCKET at another daemon)",
                    "注册服务未运行：\(path) 处没有套接字（用 `systemctl start signupd.socket` 启动；若它曾在运行，`journalctl -u signupd` 会说明停止的原因；或用 --socket、SIGNUPD_SOCKET 指向另一个服务）"),
                code: "no_daemon")
        case EACCES, EPERM:
            return CommandFailure(.unreachable, permissionHint(path: path, socket: exists ? info : nil), code: "permission_denied")
        case ECONNREFUSED:
            return CommandFailure(
                .unreachable,
                Say.pick(
                    "nothing listens on \(path): signupd stopped without removing its socket (start it with `systemctl start signupd.socket`)",
                    "\(path) 上没有服务在监听：服务停止时未删除套接字（用 `systemctl start signupd.socket` 启动）"),
                code: "connection_refused")
        default:
            return CommandFailure(.unreachable, Say.pick("cannot connect to signupd at \(path): \(UnixIO.errnoText(error))", "无法连接 \(path) 处的服务：\(UnixIO.errnoText(error))"), code: "unreachable")
        }
    }

    /// Names what refuses access: the socket's group and mode, or a directory on the way —
    /// and only advice that can work: joining a group helps when the group has access and
    /// is not root's (gid 0: membership there is root's to give, so ask the administrator).
    private static func permissionHint(path: String, socket: stat?) -> String {
        // A directory on the way that cannot be searched is the more common cause.
        var directory = path
        while let slash = directory.lastIndex(of: "/"), slash != directory.startIndex {
            directory = String(directory[..<slash])
            if access(directory, X_OK) != 0 {
                var info = stat()
                guard stat(directory, &info) == 0 else { return Say.pick("permission denied: cannot enter \(directory)", "权限不足：无法进入 \(directory)") }
                let what = Say.pick(
                    "permission denied: cannot enter \(directory) (owner \(userName(info.st_uid)), group \(groupName(info.st_gid)), mode \(mode(info.st_mode)))",
                    "权限不足：无法进入 \(directory)（所有者 \(userName(info.st_uid))，组 \(groupName(info.st_gid))，权限 \(mode(info.st_mode))）")
                return what + "; " + advice(gid: info.st_gid, groupMayEnter: info.st_mode & S_IXGRP != 0,
                                            whenClosed: Say.pick("the directory is private to its owner", "该目录只对其所有者开放"))
            }
        }
        guard let socket else { return Say.pick("permission denied on \(path)", "权限不足：\(path)") }
        let what = Say.pick(
            "permission denied on \(path) (owner \(userName(socket.st_uid)), group \(groupName(socket.st_gid)), mode \(mode(socket.st_mode)))",
            "权限不足：\(path)（所有者 \(userName(socket.st_uid))，组 \(groupName(socket.st_gid))，权限 \(mode(socket.st_mode))）")
        let groupMayConnect = socket.st_mode & S_IWGRP != 0 && socket.st_mode & S_IRGRP != 0
        return what + ": " + advice(gid: socket.st_gid, groupMayEnter: groupMayConnect,
                                    whenClosed: Say.pick("the socket is private to its owner", "该套接字只对其所有者开放"))
    }

    /// What the user can do about a path owned by group `gid`.
    static func advice(gid: gid_t, groupMayEnter: Bool, whenClosed closed: String) -> String {
        let group = groupName(gid)
        if !groupMayEnter {
            return Say.pick(
                "\(closed); ask the administrator to open it to a group of clients (the packaged setup uses signupd-clients), or connect as its owner",
                "\(closed)；请管理员向客户端组开放（安装包使用 signupd-clients 组），或以其所有者身份连接")
        }
        if gid == 0 {
            return Say.pick(
                "only root and members of root's group may connect; ask the administrator for access (the packaged setup uses the signupd-clients group), or connect as root",
                "只有 root 及其组的成员可以连接；请向管理员申请权限（安装包使用 signupd-clients 组），或以 root 身份连接")
        }
        return Say.pick(
            "only members of \(group) may connect; join with `sudo usermod -aG \(group) $USER`, then log in again",
            "只有 \(group) 组的成员可以连接；用 `sudo usermod -aG \(group) $USER` 加入该组，然后重新登录")
    }

    private static func userName(_ uid: uid_t) -> String {
        guard let entry = getpwuid(uid), let name = entry.pointee.pw_name else { return String(uid) }
        return String(cString: name)
    }

    private static func groupName(_ gid: gid_t) -> String {
        guard let entry = getgrgid(gid), let name = entry.pointee.gr_name else { return String(gid) }
        return String(cString: name)
    }

    private static func mode(_ mode: mode_t) -> String {
        let octal = String(mode & 0o7777, radix: 8)
        return String(repeating: "0", count: max(0, 4 - octal.count)) + octal
    }

    private static func kind(_ mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFREG: "a regular file"
        case S_IFDIR: "a directory"
        case S_IFIFO: "a FIFO"
        case S_IFLNK: "a symbolic link"
        default: "not a socket"
        }
    }
}
