import Foundation
import SignupProtocol
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// What only a shared store can show: several daemons ("hosts") on one PostgreSQL database.
/// The store-conformance suite (IdentityPairsTests) runs on PostgreSQL too; this suite is
/// skipped, saying so, when no server is given (scripts/with-postgres.sh gives one).
@Suite(
    "PostgreSQL: several daemons on one database",
    .enabled(if: TestPostgres.server != nil, "SIGNUPD_TEST_POSTGRES_URL is not set: PostgreSQL tests skipped (scripts/test.sh runs them: scripts/with-postgres.sh swift test --skip-build)")
)
struct PostgresStoreTests {
    static let password = "shared password 1"

    /// Two daemons on one fresh database, started at the same moment (both migrate: the
    /// advisory lock serialises them).
    static func twoHosts(arguments: [String] = []) throws -> (DaemonProcess, DaemonProcess, url: String) {
        let server = try #require(TestPostgres.server)
        let url = try server.freshDatabaseURL()
        let a = DaemonProcess(databasePath: url)
        let b = DaemonProcess(databasePath: url)
        let extra = ["--idle-exit", "20", "--database-password-file", server.passwordFile] + arguments
        try a.start(.systemd, arguments: extra, waitForReady: false)
        try b.start(.systemd, arguments: extra, waitForReady: false)
        _ = try a.waitForNotification { $0.contains("READY=1") }
        _ = try b.waitForNotification { $0.contains("READY=1") }
        return (a, b, url)
    }

    @Test("two daemons migrating one database at once: one schema, each version once")
    func migrationsAtOnce() throws {
        let (a, b, url) = try Self.twoHosts()
        let database = try #require(url.split(separator: "/").last?.split(separator: "?").first).description
        let server = try #require(TestPostgres.server)
        #expect(try server.psql("SELECT string_agg(version::text, ',') FROM signupd_schema", database: database) == "1,2,3")
        let client = try a.connect()
        _ = try client.hello()
        #expect(try client.signup("migrated", Self.password)["ok"] == .bool(true))
        #expect(try server.psql("SELECT count(*) FROM account", database: database) == "1")
        // Restarting a host finds the schema current.
        a.signal(SIGTERM)
        #expect(a.waitForExit() == 0)
        let again = DaemonProcess(databasePath: url)
        try again.start(.systemd, arguments: ["--idle-exit", "20", "--database-password-file", server.passwordFile])
        let other = try again.connect()
        _ = try other.hello()
        #expect(try other.signupVerdict("migrated").string("message") == "Username already taken")
        _ = b
    }

    @Test("a name taken on one host is taken on the other; a token from one verifies on the other")
    func sharedAccountsAndTokens() throws {
        let (a, b, _) = try Self.twoHosts()
        let onA = try a.connect()
        let onB = try b.connect()
        _ = try onA.hello()
        _ = try onB.hello()
        #expect(try onA.signup("Traveller", Self.password)["ok"] == .bool(true))
        #expect(try onB.signupVerdict("traveller").string("message") == "Username already taken")
        // The availability check refuses it: no submit is possible.
        let second = try onB.signup("TRAVELLER", Self.password)
        #expect(second.string("state") == "failed")
        #expect(second.string("message") == "Username already taken")

        let login = try onA.login("traveller", Self.password)
        let token = try #require(login.string("token"))
        try onB.send(Request(id: .string("v"), .verify(token: token)))
        #expect(try onB.next("verified").string("user") == "Traveller")
        // An unknown token is not anybody's on either host.
        try onB.send(Request(id: .string("w"), .verify(token: String(repeating: "A", count: 43))))
        let unknown = try onB.next()
        #expect(unknown.string("user") == nil)
    }

    @Test("failed logins on one host throttle the same uid and name on the other")
    func sharedThrottling() throws {
        let limit = 3
        let (a, b, _) = try Self.twoHosts(arguments: ["--login-attempts-per-minute", "\(limit)"])
        let onA = try a.connect()
        let onB = try b.connect()
        _ = try onA.hello()
        _ = try onB.hello()
        #expect(try onA.signup("guarded", Self.password)["ok"] == .bool(true))
        for _ in 0..<limit {
            #expect(try onA.login("guarded", "wrong password").string("message") == "Invalid username or password")
        }
        // Host B never saw a failure itself, yet refuses: the failures are in the database.
        let refused = try onB.login("guarded", Self.password)
        #expect(refused["ok"] == .bool(false))
        #expect(refused.string("message") == "Too many attempts, try again later")
    }

    @Test("the password comes from a file and appears in no log")
    func passwordNeverLogged() throws {
        let server = try #require(TestPostgres.server)
        let (a, _, _) = try Self.twoHosts()
        let password = try String(contentsOfFile: server.passwordFile, encoding: .utf8).trimmingCharacters(in: .newlines)
        let client = try a.connect()
        _ = try client.hello()
        _ = try client.signup("quiet", Self.password)
        #expect(!a.log.contains(password))
        #expect(a.log.contains("account store"))
    }

    @Test("sslmode=verify-full accepts the server's certificate with its CA and refuses it without")
    func verifyFull() throws {
        let server = try #require(TestPostgres.server)
        let ca = try #require(ProcessInfo.processInfo.environment["SIGNUPD_TEST_POSTGRES_CA"], "the test server has no TLS")
        let verified = server.url.replacingOccurrences(of: "sslmode=require", with: "sslmode=verify-full&sslrootcert=\(ca)")
        let good = DaemonProcess(databasePath: verified)
        try good.start(.systemd, arguments: ["--idle-exit", "20", "--database-password-file", server.passwordFile])
        let client = try good.connect()
        #expect(try client.hello()["event"] == .string("hello"))
        // The system's trust store does not know the test's self-signed certificate.
        let untrusted = DaemonProcess(databasePath: server.url.replacingOccurrences(of: "sslmode=require", with: "sslmode=verify-full"))
        try untrusted.start(.byHand, arguments: ["--database-password-file", server.passwordFile], waitForReady: false)
        #expect(untrusted.waitForExit() == 1)
        #expect(untrusted.log.contains("cannot open the account store"), "\(untrusted.log)")
    }

    @Test("a hung database (a table locked for 8 s) answers within --database-timeout, and the form stays usable")
    func statementTimeout() throws {
        let server = try #require(TestPostgres.server)
        let url = try server.freshDatabaseURL()
        let daemon = DaemonProcess(databasePath: url)
        try daemon.start(.systemd, arguments: ["--idle-exit", "20", "--database-password-file", server.passwordFile, "--database-timeout", "1"])
        let client = try daemon.connect()
        _ = try client.hello()
        #expect(try client.signup("beforelock", Self.password)["ok"] == .bool(true))
        // Another session holds the account table: every statement on it waits.
        let database = try #require(url.split(separator: "/").last?.split(separator: "?").first).description
        let locker = Process()
        locker.executableURL = URL(fileURLWithPath: "/usr/bin/psql")
        locker.arguments = ["-X", "-q", url, "-c", "BEGIN; LOCK TABLE account IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(8); COMMIT;"]
        locker.environment = ["PGPASSWORD": try String(contentsOfFile: server.passwordFile, encoding: .utf8).trimmingCharacters(in: .newlines), "PATH": "/usr/bin:/bin"]
        locker.standardOutput = FileHandle.nullDevice
        locker.standardError = FileHandle.nullDevice
        locker.standardInput = FileHandle.nullDevice
        try locker.run()
        defer { locker.waitUntilExit() }
        // Wait until the lock is held (polling the server, with a bound).
        let deadline = Date().addingTimeInterval(10)
        while try server.psql("SELECT count(*) FROM pg_locks WHERE mode = 'AccessExclusiveLock' AND relation = (SELECT oid FROM pg_class WHERE relname = 'account' LIMIT 1)", database: database) == "0" {
            try #require(Date() < deadline, "the lock was never taken")
        }
        let started = Date()
        let verdict = try client.signupVerdict("duringlock")
        let elapsed = Date().timeIntervalSince(started)
        #expect(verdict.string("message") == "Error contacting server")
        #expect(elapsed < 5, "answered after \(elapsed) s, not held for the lock's 8 s")
        // The session is not stuck busy: it answers the next request.
        try client.send(Request(id: .string("p"), .ping))
        _ = try client.next("pong")
    }

    /// This machine's name when it resolves to loopback (127.0.0.1, where the test server
    /// listens) and the test certificate does not name it; nil elsewhere.
    static let loopbackAlias: String? = {
        var name = [CChar](repeating: 0, count: 256)
        guard gethostname(&name, name.count) == 0 else { return nil }
        let host = String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        guard !host.isEmpty, host != "localhost", !host.contains("localhost") else { return nil }
        var hints = addrinfo()
        hints.ai_family = AF_INET
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, nil, &hints, &list) == 0, let first = list else { return nil }
        defer { freeaddrinfo(list) }
        let address = first.pointee.ai_addr.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr.s_addr }
        return UInt32(bigEndian: address) == 0x7F00_0001 ? host : nil
    }()

    @Test(
        "verify-full refuses a certificate that does not name the URL's host, even if it names the address the host resolves to",
        .enabled(if: PostgresStoreTests.loopbackAlias != nil, "this machine's name does not resolve to 127.0.0.1")
    )
    func verifyFullChecksTheName() throws {
        let server = try #require(TestPostgres.server)
        let ca = try #require(ProcessInfo.processInfo.environment["SIGNUPD_TEST_POSTGRES_CA"], "the test server has no TLS")
        let alias = try #require(Self.loopbackAlias)
        // The certificate names 127.0.0.1 and localhost, not this machine's name.
        let url = server.url.replacingOccurrences(of: "@127.0.0.1:", with: "@\(alias):")
            .replacingOccurrences(of: "sslmode=require", with: "sslmode=verify-full&sslrootcert=\(ca)")
        let daemon = DaemonProcess(databasePath: url)
        try daemon.start(.byHand, arguments: ["--database-password-file", server.passwordFile], waitForReady: false)
        #expect(daemon.waitForExit() == 1)
        #expect(daemon.log.contains("the server's certificate does not name \(alias)"), "\(daemon.log)")
        // verify-ca checks the chain only: the same URL is accepted.
        let chainOnly = DaemonProcess(databasePath: url.replacingOccurrences(of: "verify-full", with: "verify-ca"))
        try chainOnly.start(.systemd, arguments: ["--idle-exit", "20", "--database-password-file", server.passwordFile])
        #expect(try chainOnly.connect().hello()["event"] == .string("hello"))
    }

    @Test("sslmode=require with an sslrootcert verifies the chain (libpq's rule); TLS errors name no build path")
    func requireWithRootCert() throws {
        let server = try #require(TestPostgres.server)
        let daemon = DaemonProcess(databasePath: server.url.replacingOccurrences(of: "sslmode=require", with: "sslmode=require&sslrootcert=/etc/ssl/certs/ca-certificates.crt"))
        try daemon.start(.byHand, arguments: ["--database-password-file", server.passwordFile], waitForReady: false)
        #expect(daemon.waitForExit() == 1)
        #expect(daemon.log.contains("not signed by a trusted CA"), "\(daemon.log)")
        #expect(!daemon.log.contains(".build/"), "\(daemon.log)")
        #expect(!daemon.log.contains("checkouts"), "\(daemon.log)")
        let missing = DaemonProcess(databasePath: server.url.replacingOccurrences(of: "sslmode=require", with: "sslmode=verify-full&sslrootcert=/nonexistent/ca.pem"))
        try missing.start(.byHand, arguments: ["--database-password-file", server.passwordFile], waitForReady: false)
        #expect(missing.waitForExit() == 1)
        #expect(missing.log.contains("the CA file does not exist (sslrootcert /nonexistent/ca.pem)"), "\(missing.log)")
    }

    @Test("no password, a password file that is a directory or readable by others: each said in words")
    func passwordFileMistakes() throws {
        let server = try #require(TestPostgres.server)
        let none = DaemonProcess(databasePath: server.url)
        try none.start(.byHand, arguments: [], waitForReady: false)
        #expect(none.waitForExit() == 1)
        #expect(none.log.contains("--database-password-file") && none.log.contains("PGPASSWORD is deliberately not read"), "\(none.log)")
        let directory = DaemonProcess(databasePath: server.url)
        try directory.start(.byHand, arguments: ["--database-password-file", directory.directory], waitForReady: false)
        #expect(directory.waitForExit() == 1)
        #expect(directory.log.contains("is a directory"), "\(directory.log)")
        let open = DaemonProcess(databasePath: server.url)
        let file = "\(open.directory)/open-password"
        try "x\n".write(toFile: file, atomically: true, encoding: .utf8)
        chmod(file, 0o644)
        try open.start(.byHand, arguments: ["--database-password-file", file], waitForReady: false)
        #expect(open.waitForExit() == 1)
        #expect(open.log.contains("chmod 600"), "\(open.log)")
    }

    @Test("a pool larger than the server's max_connections is warned about at start")
    func poolLargerThanServer() throws {
        let server = try #require(TestPostgres.server)
        let daemon = DaemonProcess(databasePath: server.url)
        try daemon.start(.systemd, arguments: ["--idle-exit", "20", "--database-password-file", server.passwordFile, "--database-pool-size", "1000"])
        #expect(daemon.log.contains("--database-pool-size 1000 is more than the server's max_connections allows"), "\(daemon.log)")
    }

    @Test("--log-level trace never shows the SCRAM exchange (postgres-nio logs at most at debug)")
    func traceHidesAuthentication() throws {
        let server = try #require(TestPostgres.server)
        let daemon = DaemonProcess(databasePath: server.url)
        try daemon.start(.systemd, arguments: ["--idle-exit", "20", "--log-level", "trace", "--database-password-file", server.passwordFile])
        #expect(daemon.log.contains("account store"))
        #expect(!daemon.log.contains("SaslInitialResponse") && !daemon.log.contains("sasl"), "\(daemon.log)")
    }

    @Test("a wrong database password is a clear start-up error, exit 1")
    func wrongPassword() throws {
        let server = try #require(TestPostgres.server)
        let daemon = DaemonProcess(databasePath: server.url)
        let file = "\(daemon.directory)/wrong-password"
        try "not the password\n".write(toFile: file, atomically: true, encoding: .utf8)
        chmod(file, 0o600)
        try daemon.start(.byHand, arguments: ["--database-password-file", file], waitForReady: false)
        #expect(daemon.waitForExit() == 1)
        #expect(daemon.log.contains("28P01"), "PostgreSQL's SQLSTATE for a failed password: \(daemon.log)")
        #expect(!daemon.log.contains("not the password"))
    }
}

/// `--database postgresql://…` mistakes, refused before anything connects (no server needed):
/// usage errors, exit 64, as `--check-config` reports them too.
@Suite("PostgreSQL URLs refused at start")
struct PostgresURLTests {
    func refusal(_ url: String, environment: [String: String] = [:], exitStatus: Int32 = 64) throws -> String {
        let daemon = DaemonProcess(databasePath: url)
        try daemon.start(.byHand, arguments: [], environment: environment, waitForReady: false)
        #expect(daemon.waitForExit() == exitStatus)
        return daemon.log
    }

    @Test("a password in the URL is refused, and not echoed")
    func passwordInURL() throws {
        let log = try refusal("postgresql://signupd:hunter2secret@127.0.0.1:1/db")
        #expect(log.contains("--database: a password in the URL"))
        #expect(!log.contains("hunter2secret"))
    }

    @Test("a password is not echoed however the URL is misspelled (helper-42)", arguments: [
        "POSTGRESQL://u:hunter2secret@h/db", "PostgreSQL://u:hunter2secret@h/db", "postgresql:/u:hunter2secret@h/db",
        "pgsql://u:hunter2secret@h/db", " postgresql://u:hunter2secret@h/db", "postgresql://u%3Ahunter2secret@h/db",
        // Without "://" (helper-43), or the password typed as another parameter.
        "postgres//u:hunter2secret@h/db", "u:hunter2secret@127.0.0.1:5432/db", "//u:hunter2secret@h/db",
        "postgresql://u@h/db?sslmode=hunter2secret", "postgresql://u@h/db?port=hunter2secret",
    ])
    func misspelled(_ url: String) throws {
        let log = try refusal(url)
        #expect(log.contains("--database"), "\(log)")
        #expect(!log.contains("hunter2secret"), "\(log)")
    }

    @Test("an unknown sslmode, a bad port, an unknown parameter and no user are each named")
    func badURLs() throws {
        #expect(try refusal("postgresql://u@h/db?sslmode=sometimes").contains("sslmode is not one of"))
        #expect(try refusal("postgresql://u@h:99999/db").contains("--database:"))
        #expect(try refusal("postgresql://u@h/db?connect_timeout=3").contains("unsupported URL parameter connect_timeout"))
        #expect(try refusal("postgresql://127.0.0.1/db").contains("no user"))
        #expect(try refusal("postgresql://u@h/db?sslmode=verify-full&sslmode=disable").contains("the URL parameter sslmode is given twice"))
    }

    @Test("PostgreSQL-only options with an SQLite store are refused, exit 64")
    func postgresOptionsWithSQLite() throws {
        for option in [["--database-password-file", "/dev/null"], ["--database-pool-size", "4"]] {
            let daemon = DaemonProcess()
            try daemon.start(.byHand, arguments: option, waitForReady: false)
            #expect(daemon.waitForExit() == 64)
            #expect(daemon.log.contains("\(option[0]) is for a PostgreSQL store"), "\(daemon.log)")
        }
    }

    @Test("an unreachable server is a clear start-up error naming it")
    func unreachable() throws {
        // Port 1 on loopback: nothing listens there.
        // A URL that reads well: a failed start (1), not a usage error.
        let log = try refusal("postgresql://signupd@127.0.0.1:1/db?sslmode=disable", exitStatus: 1)
        #expect(log.contains("cannot open the account store: postgresql://signupd@127.0.0.1:1/db?sslmode=disable"))
        #expect(log.contains("connection refused by 127.0.0.1:1"), "\(log)")
    }
}
