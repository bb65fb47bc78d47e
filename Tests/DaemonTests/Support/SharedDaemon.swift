import Foundation
import SignupProtocol

/// One socket-activated daemon shared by the tests that only need a working server.
enum SharedDaemon {
    nonisolated(unsafe) private static var instance: DaemonProcess?
    private static let lock = NSLock()

    static func get() throws -> DaemonProcess {
        lock.lock()
        defer { lock.unlock() }
        if let instance, !instance.hasExited { return instance }
        let daemon = try SharedDaemons.start(DaemonProcess(), arguments: ["--max-line-bytes", "65536"])
        instance = daemon
        return daemon
    }

    /// A connected client that has read its `hello`.
    static func client() throws -> LineClient {
        let client = try get().connect()
        _ = try client.hello()
        return client
    }
}

extension LineClient {
    /// Opens a session and returns its id, after reading the opening snapshot.
    func open(_ form: String) throws -> String {
        try send(Request(id: .string("open"), .open(form: form, locale: nil)))
        let opened = try next("opened")
        _ = try next("busy")  // the snapshot ends with busy
        return opened.string("session") ?? ""
    }

    /// Sets a field and waits until the daemon has processed it.
    func set(_ field: String, _ value: String) throws -> [JSONObject] {
        try send(Request(.set(session: nil, field: field, value: value)))
        return try sync()
    }

    /// Waits for the username's availability answer after a set.
    func awaitUsernameResult() throws -> JSONObject {
        try next { $0.event == "validation" && $0.string("field") == "username" && ["ok", "failed"].contains($0.string("state")) }.match
    }

    /// Fills in and submits a signup; returns the result event.
    func signup(_ username: String, _ password: String) throws -> JSONObject {
        _ = try open("signup")
        try send(Request(.set(session: nil, field: "username", value: username)))
        let availability = try awaitUsernameResult()
        guard availability.string("state") == "ok" else { return availability }
        _ = try set("password", password)
        _ = try set("repeatedPassword", password)
        try send(Request(id: .string("submit"), .submit(session: nil)))
        return try next("result")
    }

    /// Logs in; returns the result event.
    func login(_ username: String, _ password: String) throws -> JSONObject {
        _ = try open("login")
        _ = try set("username", username)
        _ = try set("password", password)
        try send(Request(id: .string("submit"), .submit(session: nil)))
        return try next("result")
    }
}

/// Daemons that live as long as the test process, not one test: no lifetime bound (a
/// suite may run longer than any one test), stopped with SIGTERM when the process exits.
/// Should the process die without exiting, each ends itself 300 s after its last
/// connection (`--idle-exit`); a daemon found gone meanwhile is started again by its
/// getter, as systemd would on the next connection.
enum SharedDaemons {
    nonisolated(unsafe) private static var all: [DaemonProcess] = []
    private static let lock = NSLock()

    static func start(_ daemon: DaemonProcess, arguments: [String]) throws -> DaemonProcess {
        try daemon.start(.systemd, arguments: ["--idle-exit", "300"] + arguments, lifetime: nil)
        lock.withLock {
            if all.isEmpty { atexit { SharedDaemons.stopAll() } }
            all.append(daemon)
        }
        return daemon
    }

    private static func stopAll() {
        for daemon in lock.withLock({ all }) { daemon.signal(SIGTERM) }
    }
}

/// A username no other test uses.
func uniqueName(_ prefix: String = "user") -> String {
    "\(prefix)\(UInt32.random(in: 0...UInt32.max))"
}
