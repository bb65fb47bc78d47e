import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The real `signupd` binary, started as a separate process the way systemd starts it
/// (listening socket on fd 3, `LISTEN_FDS`, `LISTEN_PID`, `NOTIFY_SOCKET`) or by hand.
final class DaemonProcess {
    enum Activation {
        /// The test plays systemd: it owns the listening socket and the notify socket.
        case systemd
        /// signupd binds `--socket` itself.
        case byHand
    }

    let directory: String
    let socketPath: String
    let databasePath: String
    let logPath: String
    private(set) var pid: pid_t = 0
    /// The spawned process, for signals and the reap (see `ChildProcess`).
    private var child: ChildProcess?
    private var notifyFD: Int32 = -1
    private var listenFD: Int32 = -1
    private(set) var exitStatus: Int32?

    /// Fast hashing for tests: still Argon2id, at libsodium's minimum cost.
    static let fastHashing = ["--argon2-ops", "1", "--argon2-memory-kib", "8"]

    /// The binary under test: `$SIGNUPD_BINARY`, or `signupd` next to the test bundle.
    static var binary: String {
        if let path = ProcessInfo.processInfo.environment["SIGNUPD_BINARY"] { return path }
        let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        var directory = executable.deletingLastPathComponent()
        if directory.lastPathComponent.hasSuffix(".xctest") { directory.deleteLastPathComponent() }
        return directory.appendingPathComponent("signupd").path
    }

    /// The binary for a daemon that runs as another uid: a copy in a directory made for the
    /// purpose, readable and searchable by all, made once per test process and removed with
    /// the test directories. The build directory may not be reachable by that uid: a checkout
    /// under /root (0700) is not, and `sh -c` run as that uid cannot exec it there.
    static let reachableBinary: String = {
        var template = Array("/tmp/signupd-test-bin-XXXXXX".utf8CString)
        let directory = String(cString: template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }!)
        removedAtExit.withLock { $0.append(directory) }
        chmod(directory, 0o755)
        let copy = "\(directory)/signupd"
        do {
            try FileManager.default.copyItem(atPath: binary, toPath: copy)
        } catch {
            fatalError("copying \(binary) to \(copy): \(error)")
        }
        chmod(copy, 0o755)
        // Phone numbers are checked by a library signupd opens beside itself, or from
        // ../lib/signupd as installed (PhoneLibrary): the copy gets it beside it.
        let home = URL(fileURLWithPath: binary).deletingLastPathComponent()
        let library = [home.appendingPathComponent("libsignupd-phone.so"), home.appendingPathComponent("../lib/signupd/libsignupd-phone.so")]
            .map(\.path).first { FileManager.default.fileExists(atPath: $0) }
        if let library {
            do {
                try FileManager.default.copyItem(atPath: library, toPath: "\(directory)/libsignupd-phone.so")
            } catch {
                fatalError("copying \(library) to \(directory): \(error)")
            }
        }
        return copy
    }()

    /// A fresh private directory for one daemon's socket, database and log. It is removed
    /// when the test process exits (not before: a test may start a second daemon in it),
    /// unless a sanitizer run reads the logs afterwards (scripts/sanitizers.sh) or
    /// SIGNUPD_KEEP_TEST_DIRS asks to keep them.
    static func makeDirectory() -> String {
        var template = Array("/tmp/signupd-test-XXXXXX".utf8CString)
        let path = String(cString: template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }!)
        made.withLock { $0.append(path) }
        return path
    }

    /// Paths removed when the test process exits, sanitizer runs included (the binary's copy).
    private static let removedAtExit: Mutex<[String]> = {
        atexit { for path in DaemonProcess.removedAtExit.withLock({ $0 }) { try? FileManager.default.removeItem(atPath: path) } }
        return Mutex([])
    }()

    /// The test directories made so far.
    static var directoriesMade: [String] { made.withLock { $0 } }

    private static let made: Mutex<[String]> = {
        let environment = ProcessInfo.processInfo.environment
        if environment["SIGNUPD_TEST_SANITIZER"] == nil, environment["SIGNUPD_KEEP_TEST_DIRS"] == nil {
            atexit { for path in DaemonProcess.made.withLock({ $0 }) { try? FileManager.default.removeItem(atPath: path) } }
        }
        return Mutex([])
    }()

    init(directory: String = DaemonProcess.makeDirectory(), databasePath: String? = nil) {
        self.directory = directory
        socketPath = "\(directory)/signupd.sock"
        self.databasePath = databasePath ?? "\(directory)/accounts.sqlite"
        logPath = "\(directory)/signupd.log"
    }

    deinit {
        if let child, exitStatus == nil {
            child.signal(SIGKILL)
            _ = child.waitAndReap()
        }
        if notifyFD >= 0 { close(notifyFD) }
        if listenFD >= 0 { close(listenFD) }
    }

    /// Closes the test's own copy of the socket it passed (as systemd's): connections still
    /// in its queue, which no daemon accepted, then end.
    func closeListener() {
        if listenFD >= 0 { close(listenFD) }
        listenFD = -1
    }

    /// Starts the daemon; with `.systemd`, returns once it has sent READY=1.
    /// `umask` runs the daemon under that file-creation mask; `passSocket: false` leaves
    /// out `--socket` when run by hand (for `$SIGNUPD_SOCKET` and the defaults);
    /// `passDatabase: false` likewise for `--database`; `runAs` drops to that uid and gid.
    /// `lifetime` bounds how long it may run before it is killed (nil: the caller stops it).
    /// `program` runs another copy of signupd than `binary` (installed elsewhere).
    func start(
        _ activation: Activation = .systemd, arguments extra: [String] = [], environment: [String: String] = [:],
        waitForReady: Bool = true, umask mask: mode_t? = nil, passSocket: Bool = true, passDatabase: Bool = true, runAs uid: uid_t? = nil,
        lifetime: Int? = 120, program: String? = nil
    ) throws {
        var arguments = (passDatabase ? ["--database", databasePath] : []) + Self.fastHashing + extra
        var env = ["PATH=/usr/bin:/bin"]
        for (key, value) in environment { env.append("\(key)=\(value)") }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        let log = open(logPath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        defer { close(log) }
        posix_spawn_file_actions_adddup2(&actions, log, 1)
        posix_spawn_file_actions_adddup2(&actions, log, 2)
        // Both ways report readiness with sd_notify, so the test knows when to connect.
        notifyFD = try UnixSocket.notifySocket(at: "\(directory)/notify.sock")
        UnixSocket.setReceiveTimeout(notifyFD, seconds: 30)
        // A daemon running as another uid must be able to send its READY=1.
        if uid != nil { chmod("\(directory)/notify.sock", 0o666) }
        env.append("NOTIFY_SOCKET=\(directory)/notify.sock")
        let program = program ?? (uid == nil ? Self.binary : Self.reachableBinary)
        var argv: [String]
        switch activation {
        case .systemd:
            listenFD = try UnixSocket.listen(at: socketPath)
            posix_spawn_file_actions_adddup2(&actions, listenFD, 3)
            // Unless the test says otherwise (a forged count, more names).
            if environment["LISTEN_FDS"] == nil { env += ["LISTEN_FDS=1", "LISTEN_FDNAMES=signupd.socket"] }
            // LISTEN_PID must be the daemon's own pid: a shell learns it, then execs.
            argv = ["/bin/sh", "-c", "LISTEN_PID=$$; WATCHDOG_PID=$$; export LISTEN_PID WATCHDOG_PID; exec \"$0\" \"$@\"", program] + arguments
        case .byHand:
            if passSocket { arguments += ["--socket", socketPath] }
            argv = [program] + arguments
        }
        if let mask {
            argv = ["/bin/sh", "-c", "umask \(String(mask, radix: 8)); exec \"$0\" \"$@\""] + argv
        }
        if let uid {
            argv = ["/usr/bin/setpriv", "--reuid", "\(uid)", "--regid", "\(uid)", "--clear-groups"] + argv
        }
        let cArgv = argv.map { strdup($0) } + [nil]
        let cEnv = env.map { strdup($0) } + [nil]
        defer {
            cArgv.forEach { free($0) }
            cEnv.forEach { free($0) }
        }
        // Nothing else of the test process's: SwiftNIO opens its sockets without
        // close-on-exec, so a daemon spawned while another test's connection is open would
        // hold that connection too, and its peer would never see it close.
        Self.closeTheRest(&actions, from: activation == .systemd ? 4 : 3)
        let status = posix_spawn(&pid, argv[0], &actions, nil, cArgv, cEnv)
        guard status == 0 else { throw UnixSocket.Failure(description: "posix_spawn: \(status)") }
        let child = ChildProcess(pid)
        self.child = child
        // A bound on how long a test may keep a daemon: never a synchronisation. Through
        // `child`, so it cannot hit another process that reused the pid once this one is reaped.
        if let lifetime {
            DispatchQueue.global().asyncAfter(deadline: .now() + .seconds(lifetime)) { child.signal(SIGKILL) }
        }
        if waitForReady {
            _ = try waitForNotification { $0.contains("READY=1") }
        }
    }

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34+; Debian 12 has 2.36), which
    /// Swift's Glibc module does not declare: looked up by name. Where it is missing, every
    /// descriptor of this process is marked close-on-exec instead (a narrower guarantee).
    private static func closeTheRest(_ actions: inout posix_spawn_file_actions_t, from first: Int32) {
        typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
        if let symbol = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") {
            _ = unsafeBitCast(symbol, to: AddCloseFrom.self)(&actions, first)
            return
        }
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? [] {
            guard let fd = Int32(entry), fd >= first else { continue }
            _ = fcntl(fd, F_SETFD, fcntl(fd, F_GETFD) | FD_CLOEXEC)
        }
    }

    /// Reads sd_notify datagrams until one satisfies `predicate`; returns it.
    func waitForNotification(_ predicate: (String) -> Bool) throws -> String {
        while true {
            var buffer = [UInt8](repeating: 0, count: 4096)
            let count = buffer.withUnsafeMutableBytes { recv(notifyFD, $0.baseAddress, $0.count, 0) }
            guard count > 0 else {
                throw UnixSocket.Failure(description: "no sd_notify message (errno \(errno)); log:\n\(log)")
            }
            let message = String(decoding: buffer[..<count], as: UTF8.self)
            notifications.append(message)
            if predicate(message) { return message }
        }
    }

    /// Every sd_notify message read so far.
    private(set) var notifications: [String] = []

    func signal(_ signal: Int32) {
        child?.signal(signal)
    }

    /// Waits for the daemon to exit and returns its exit code (128+n for signal n).
    @discardableResult
    func waitForExit() -> Int32 {
        if let exitStatus { return exitStatus }
        let code = child?.waitAndReap() ?? -1
        exitStatus = code
        return code
    }

    /// What the daemon wrote to stdout and stderr.
    var log: String {
        (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
    }

    /// Whether the process has exited (without reaping it).
    var hasExited: Bool {
        guard exitStatus == nil else { return true }
        var info = siginfo_t()
        return waitid(P_PID, id_t(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info._sifields._sigchld.si_pid == pid
    }

    func connect() throws -> LineClient {
        try LineClient(path: socketPath)
    }
}
