import Foundation
import SignupProtocol
import Testing

/// Every account store the daemon can run on, selected the way a user selects it
/// (`--database`). Every store-conformance test runs on each case unchanged. PostgreSQL is
/// among them when `SIGNUPD_TEST_POSTGRES_URL` names a server (scripts/with-postgres.sh
/// starts one and sets it); `PostgresConformanceTests` says when it is skipped.
enum StoreUnderTest: String, CaseIterable, Sendable, CustomStringConvertible {
    case sqlite
    case memory
    case postgres

    static var allCases: [StoreUnderTest] {
        TestPostgres.server == nil ? [.sqlite, .memory] : [.sqlite, .memory, .postgres]
    }

    var description: String { rawValue }

    /// A fresh daemon on this store (for PostgreSQL, on a database of its own), kept for
    /// the whole test process (`SharedDaemons`).
    func startDaemon(arguments: [String] = []) throws -> DaemonProcess {
        var extra: [String] = []
        let daemon: DaemonProcess
        switch self {
        case .sqlite: daemon = DaemonProcess()
        case .memory: daemon = DaemonProcess(databasePath: ":memory:")
        case .postgres:
            let server = try #require(TestPostgres.server, "SIGNUPD_TEST_POSTGRES_URL is not set")
            daemon = DaemonProcess(databasePath: try server.freshDatabaseURL())
            extra = ["--database-password-file", server.passwordFile]
        }
        return try SharedDaemons.start(daemon, arguments: extra + arguments)
    }
}

/// The PostgreSQL server of `scripts/with-postgres.sh`, from its environment variables.
struct TestPostgres: Sendable {
    /// `postgresql://user@host:port/db?sslmode=…`, to the maintenance database.
    let url: String
    let passwordFile: String

    static let server: TestPostgres? = {
        let environment = ProcessInfo.processInfo.environment
        guard let url = environment["SIGNUPD_TEST_POSTGRES_URL"], let passwordFile = environment["SIGNUPD_TEST_POSTGRES_PASSWORD_FILE"] else { return nil }
        return TestPostgres(url: url, passwordFile: passwordFile)
    }()

    /// Runs SQL with psql against `database` (nil: the maintenance one); returns its output.
    @discardableResult
    func psql(_ sql: String, database: String? = nil) throws -> String {
        var target = url
        if let database, let slash = url.range(of: "/", options: .backwards), let query = url.range(of: "?") {
            target = String(url[..<slash.upperBound]) + database + String(url[query.lowerBound...])
        }
        let password = try String(contentsOfFile: passwordFile, encoding: .utf8).trimmingCharacters(in: .newlines)
        // Output to a file, not a pipe: a daemon another test spawns at the same moment
        // inherits the pipe's write end and would hold off its end-of-file for minutes.
        let directory = DaemonProcess.makeDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let outputPath = "\(directory)/psql.out"
        _ = FileManager.default.createFile(atPath: outputPath, contents: nil)
        let output = try FileHandle(forWritingTo: URL(fileURLWithPath: outputPath))
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/psql")
        process.arguments = ["-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", target, "-c", sql]
        process.environment = ["PGPASSWORD": password, "PATH": "/usr/bin:/bin"]
        process.standardOutput = output
        process.standardError = output
        process.standardInput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        try output.close()
        let text = try String(contentsOfFile: outputPath, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        guard process.terminationStatus == 0 else { throw UnixSocket.Failure(description: "psql: \(text)") }
        return text
    }

    /// A new, empty database; its URL.
    func freshDatabaseURL() throws -> String {
        let name = "t_\(UInt64.random(in: 0..<UInt64.max))"
        try psql("CREATE DATABASE \(name)")
        return url.replacingOccurrences(of: "/postgres?", with: "/\(name)?")
    }
}

/// One daemon per (purpose, store), started on first use and shared by a suite's tests.
enum DaemonPerStore {
    nonisolated(unsafe) private static var daemons: [String: DaemonProcess] = [:]
    private static let lock = NSLock()

    static func get(_ purpose: String, _ store: StoreUnderTest, arguments: [String] = []) throws -> DaemonProcess {
        lock.lock()
        defer { lock.unlock() }
        let key = "\(purpose)/\(store)"
        if let daemon = daemons[key], !daemon.hasExited { return daemon }
        let daemon = try store.startDaemon(arguments: arguments)
        daemons[key] = daemon
        return daemon
    }
}

extension LineClient {
    /// Opens a login form and fills it in; returns the username's validation and whether
    /// submit became enabled.
    func fillLogin(_ username: String, _ password: String) throws -> (username: JSONObject, enabled: Bool) {
        _ = try open("login")
        let afterName = try set("username", username)
        let afterPassword = try set("password", password)
        let validation = try #require(afterName.last { $0.event == "validation" && $0.string("field") == "username" })
        let enabled = afterPassword.contains { $0.event == "enabled" && $0["value"] == .bool(true) }
        return (validation, enabled)
    }

    /// Submits the filled-in form; returns the result.
    func submitForResult() throws -> JSONObject {
        try send(Request(id: .string("submit"), .submit(session: nil)))
        return try next("result")
    }

    /// The availability answer (or rule failure) for a name in a fresh signup form.
    func signupVerdict(_ username: String) throws -> JSONObject {
        _ = try open("signup")
        try send(Request(.set(session: nil, field: "username", value: username)))
        return try awaitUsernameResult()
    }
}
