import Foundation
import Protocol
import Testing

/// Every account store the daemon can run on, selected the way a user selects it
/// (`--database`). A new store (PostgreSQL) adds a case here and runs every
/// store-conformance test unchanged.
enum StoreUnderTest: String, CaseIterable, Sendable, CustomStringConvertible {
    case sqlite
    case memory

    var description: String { rawValue }

    /// A fresh daemon on this store, kept for the whole test process (`SharedDaemons`).
    func startDaemon(arguments: [String] = []) throws -> DaemonProcess {
        let daemon: DaemonProcess = switch self {
        case .sqlite: DaemonProcess()
        case .memory: DaemonProcess(databasePath: ":memory:")
        }
        return try SharedDaemons.start(daemon, arguments: arguments)
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
