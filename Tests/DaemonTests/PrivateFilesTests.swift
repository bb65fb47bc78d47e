import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// What signupd creates is private, and it refuses directories another user could have
/// prepared for it (issue 9, items 6-8). Each case runs the real binary by hand.
@Suite("files and directories signupd uses are private and checked")
struct PrivateFilesTests {
    /// The names of the entries directly in `directory` that belong to `uid`.
    private static func entriesOwned(by uid: uid_t, in directory: String) -> Set<String> {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return Set(names.filter { name in
            var info = stat()
            return lstat("\(directory)/\(name)", &info) == 0 && info.st_uid == uid
        })
    }

    private static func mode(_ path: String) -> mode_t? {
        var info = stat()
        return stat(path, &info) == 0 ? info.st_mode & 0o7777 : nil
    }

    @Test("under umask 022 the database, its WAL and shared-memory files are 0600")
    func databaseFilesArePrivate() throws {
        let daemon = DaemonProcess()
        try daemon.start(.byHand, umask: 0o022)
        let client = try daemon.connect()
        _ = try client.hello()
        #expect(try client.signup("umaskuser", "a long secret")["ok"] == .bool(true))
        for suffix in ["", "-wal", "-shm"] {
            #expect(Self.mode(daemon.databasePath + suffix) == 0o600, "accounts.sqlite\(suffix)")
        }
        // The socket still gets the mode it is meant to have, for its group.
        #expect(Self.mode(daemon.socketPath) == 0o660)
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit() == 0)
    }

    @Test("a database left readable by an older release is narrowed to 0600 at start")
    func existingDatabaseIsNarrowed() throws {
        let first = DaemonProcess()
        try first.start(.byHand)
        first.signal(SIGTERM)
        #expect(first.waitForExit() == 0)
        chmod(first.databasePath, 0o644)
        let second = DaemonProcess(directory: first.directory)
        try second.start(.byHand)
        #expect(Self.mode(first.databasePath) == 0o600)
        #expect(second.log.contains("made \(first.databasePath) private"))
        second.signal(SIGTERM)
        #expect(second.waitForExit() == 0)
    }

    @Test("a directory that belongs to another user is refused, and nothing in it is read", .enabled(if: getuid() == 0, "needs root to chown"))
    func otherUsersDirectory() throws {
        let directory = DaemonProcess.makeDirectory()
        let planted = "\(directory)/planted"
        mkdir(planted, 0o700)
        let database = "\(planted)/accounts.sqlite"
        let bytes = Data("not yours to read".utf8)
        #expect(FileManager.default.createFile(atPath: database, contents: bytes))
        chown(planted, 65534, 65534)
        let daemon = DaemonProcess(directory: directory, databasePath: database)
        try daemon.start(.byHand, waitForReady: false)
        #expect(daemon.waitForExit() == 1)
        #expect(daemon.log.contains("refusing \(planted): it belongs to uid 65534"))
        #expect(FileManager.default.contents(atPath: database) == bytes)
        #expect(!FileManager.default.fileExists(atPath: database + "-wal"))
        #expect(!FileManager.default.fileExists(atPath: daemon.socketPath))
    }

    @Test("a database whose files belong to another user is refused, root included", .enabled(if: getuid() == 0, "needs root to chown"))
    func foreignDatabaseFile() throws {
        let first = DaemonProcess()
        try first.start(.byHand)
        first.signal(SIGTERM)
        #expect(first.waitForExit() == 0)
        // The files as the other user left them (a -wal may or may not outlive a clean stop).
        let files = ["", "-wal", "-shm"].map { first.databasePath + $0 }.filter { FileManager.default.fileExists(atPath: $0) }
        for file in files { chown(file, 994, 994) }
        let before = files.map { (try? FileManager.default.attributesOfItem(atPath: $0)).map { "\($0[.size] ?? 0) \($0[.modificationDate] ?? 0) \($0[.ownerAccountID] ?? 0)" } }
        let second = DaemonProcess(directory: first.directory)
        try second.start(.byHand, waitForReady: false)
        #expect(second.waitForExit() == 1)
        #expect(second.log.contains("refusing \(first.databasePath): it belongs to uid 994, not to uid 0"))
        // Nothing was opened: no file appeared, none changed size, time or owner.
        let after = files.map { (try? FileManager.default.attributesOfItem(atPath: $0)).map { "\($0[.size] ?? 0) \($0[.modificationDate] ?? 0) \($0[.ownerAccountID] ?? 0)" } }
        #expect(after == before)
        #expect(["", "-wal", "-shm"].filter { FileManager.default.fileExists(atPath: first.databasePath + $0) }.count == files.count)
    }

    @Test("a directory writable by group or others is refused with its mode")
    func writableDirectory() throws {
        let directory = DaemonProcess.makeDirectory()
        let shared = "\(directory)/shared"
        mkdir(shared, 0o700)
        chmod(shared, 0o1777)
        let daemon = DaemonProcess(directory: directory, databasePath: "\(shared)/accounts.sqlite")
        try daemon.start(.byHand, waitForReady: false)
        #expect(daemon.waitForExit() == 1)
        #expect(daemon.log.contains("refusing \(shared): it is writable by group or others (mode 01777)"))
        // A sticky shared directory must stay writable by all: no chmod advice for it.
        #expect(daemon.log.contains("it is a shared directory; use a directory of signupd's own in it"))
        #expect(!daemon.log.contains("chmod"))
        #expect(!FileManager.default.fileExists(atPath: "\(shared)/accounts.sqlite"))
    }

    @Test("a socket directly in /tmp (sticky, root's) is accepted: nobody else can remove or replace it there")
    func socketInStickyTmp() throws {
        let directory = DaemonProcess.makeDirectory()
        let socket = "/tmp/signupd-sticky-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).sock"
        defer { unlink(socket) }
        let daemon = DaemonProcess(directory: directory)
        try daemon.start(.byHand, arguments: ["--socket", socket], passSocket: false)
        #expect(!daemon.log.contains("refusing"))
        let client = try UnixSocket.connect(to: socket)
        close(client)
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit() == 0)
    }

    @Test("an explicit --database whose directory does not exist exits 1 and names it")
    func missingParent() throws {
        let directory = DaemonProcess.makeDirectory()
        let missing = "\(directory)/no/such/dir"
        let daemon = DaemonProcess(directory: directory, databasePath: "\(missing)/a.sqlite")
        try daemon.start(.byHand, waitForReady: false)
        #expect(daemon.waitForExit() == 1)
        #expect(daemon.log.contains("--database \(missing)/a.sqlite: the directory \(missing) does not exist"))
        #expect(!FileManager.default.fileExists(atPath: "\(directory)/no"))
    }

    @Test("a user without XDG_RUNTIME_DIR or HOME gets an error, never a directory in /tmp", .enabled(if: getuid() == 0, "needs root to run as another uid"))
    func noFallbackToTmp() throws {
        let daemon = DaemonProcess()
        chown(daemon.directory, 65534, 65534)
        let before = Self.entriesOwned(by: 65534, in: "/tmp")
        try daemon.start(.byHand, waitForReady: false, passSocket: false, passDatabase: false, runAs: 65534)
        #expect(daemon.waitForExit() == 1)
        // The daemon itself ran as that uid and gave the reason (a program that cannot be
        // executed exits 126 or 127, and says nothing of XDG_RUNTIME_DIR).
        #expect(daemon.log.contains("XDG_RUNTIME_DIR is not set"))
        // Nothing new in /tmp belongs to that uid, whatever its name (other tests' own
        // directories, chowned to it, are not the daemon's).
        let made = Set(DaemonProcess.directoriesMade.map { ($0 as NSString).lastPathComponent })
        #expect(Self.entriesOwned(by: 65534, in: "/tmp").subtracting(before).subtracting(made).isEmpty)
    }

    @Test("a user without XDG_STATE_HOME gets the default database under HOME, its new directories 0700", .enabled(if: getuid() == 0, "needs root to run as another uid"))
    func defaultDatabaseUnderHome() throws {
        let daemon = DaemonProcess()
        chown(daemon.directory, 65534, 65534)
        try daemon.start(.byHand, environment: ["HOME": daemon.directory], umask: 0o022, passDatabase: false, runAs: 65534)
        let state = "\(daemon.directory)/.local/state/signupd"
        #expect(Self.mode(state) == 0o700)
        #expect(Self.mode("\(state)/accounts.sqlite") == 0o600)
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit() == 0)
    }

    @Test("the daemon binds $SIGNUPD_SOCKET, as the client connects to it")
    func honoursSignupdSocket() throws {
        let daemon = DaemonProcess()
        let path = "\(daemon.directory)/from-environment.sock"
        try daemon.start(.byHand, environment: ["SIGNUPD_SOCKET": path], passSocket: false)
        let client = try LineClient(path: path)
        #expect(try client.hello().string("protocol") == "signup/1")
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit() == 0)
    }
}
