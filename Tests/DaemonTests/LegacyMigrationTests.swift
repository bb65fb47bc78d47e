import CSodium
import Foundation
import GRDB
import SignupProtocol
import Testing

/// A database written by the previous schema (v1: keys were `lowercased()` bytes) opens in
/// today's daemon, gets Unicode identity keys, and keeps every account working.
@Suite("Migrating a v1 database to Unicode identity keys")
struct LegacyMigrationTests {
    static let koreanNFC = "\u{D55C}\u{AD6D}"
    static let koreanNFD = "\u{1112}\u{1161}\u{11AB}\u{1100}\u{116E}\u{11A8}"
    /// A login token issued before the migration, to the decomposed twin.
    static let oldToken = String(repeating: "A", count: 42) + "Q"

    /// A database as a v1 daemon left it: its schema is frozen in Fixtures/v1-schema.sql
    /// (migrations are never edited, so that file stays true).
    static func writeV1Database(at path: String) throws {
        let fixture = SourceTree.root.appendingPathComponent("Tests/DaemonTests/Fixtures/v1-schema.sql")
        let queue = try DatabaseQueue(path: path)
        try queue.write { db in try db.execute(sql: try String(contentsOf: fixture, encoding: .utf8)) }
        let accounts: [(String, String)] = [
            (koreanNFC, "first password"), (koreanNFD, "second password"),
            ("stra\u{00DF}e", "third password"), ("STRASSE", "fourth password"), ("alice", "alice password"),
        ]
        try queue.write { db in
            for (name, password) in accounts {
                // v1's key: lowercased() of the bytes as typed.
                try db.execute(
                    sql: "INSERT INTO account (username, usernameKey, passwordHash, createdAt) VALUES (?, ?, ?, 0)",
                    arguments: [name, name.lowercased(), try hash(password)]
                )
            }
            let count = try Int.fetchOne(db, sql: "SELECT count(*) FROM account")
            #expect(count == accounts.count, "v1 made them five accounts")
            try db.execute(
                sql: "INSERT INTO token (hash, accountId, expiresAt) VALUES (?, 2, ?)",
                arguments: [Data(sha256(oldToken)), Int(Date().timeIntervalSince1970) + 3600]
            )
        }
    }

    static func hash(_ password: String) throws -> String {
        #expect(sodium_init() >= 0)
        var output = [CChar](repeating: 0, count: Int(crypto_pwhash_strbytes()))
        let bytes = Array(password.utf8CString)
        // The tests' fast cost (DaemonProcess.fastHashing), so no rehash happens at login.
        let status = crypto_pwhash_str_alg(&output, bytes, UInt64(bytes.count - 1), 1, 8192, crypto_pwhash_alg_argon2id13())
        try #require(status == 0)
        return String(decoding: output.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    static func sha256(_ text: String) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: Int(crypto_hash_sha256_bytes()))
        let bytes = Array(text.utf8)
        _ = crypto_hash_sha256(&digest, bytes, UInt64(bytes.count))
        return digest
    }

    @Test("colliding v1 accounts are kept, logged once, log in; new colliding names are refused; the limiter holds")
    func migrate() throws {
        let daemon = DaemonProcess()
        try Self.writeV1Database(at: daemon.databasePath)
        try daemon.start(.systemd, arguments: ["--idle-exit", "20", "--login-attempts-per-minute", "3"])
        // A connection holds at most 16 sessions: a fresh one for each step.
        var client: LineClient { get throws { let client = try daemon.connect(); _ = try client.hello(); return client } }

        // Logged once at start, naming both groups.
        let warnings = daemon.log.components(separatedBy: "\n").filter { $0.contains("collide under Unicode identity keys") }
        #expect(warnings.count == 1, "\(daemon.log)")
        #expect(warnings.first?.contains("STRASSE") == true)

        // Every account still logs in with its own spelling and password.
        let nfc = try client.login(Self.koreanNFC, "first password")
        #expect(nfc["ok"] == .bool(true))
        #expect(nfc.string("user").map { Array($0.utf8) } == Array(Self.koreanNFC.utf8))
        let nfd = try client.login(Self.koreanNFD, "second password")
        #expect(nfd["ok"] == .bool(true))
        #expect(nfd.string("user").map { Array($0.utf8) } == Array(Self.koreanNFD.utf8), "the twin, as it was typed")
        #expect(try client.login(Self.koreanNFC, "second password")["ok"] == .bool(false), "two accounts, two passwords")
        #expect(try client.login("stra\u{00DF}e", "third password")["ok"] == .bool(true))
        #expect(try client.login("STRASSE", "fourth password")["ok"] == .bool(true))
        #expect(try client.login("Strasse", "fourth password")["ok"] == .bool(true), "v1's key of Strasse was STRASSE's")
        #expect(try client.login("alice", "alice password")["ok"] == .bool(true))

        // A token issued before the migration still names its owner.
        let verifier = try client
        try verifier.send(Request(id: .string("verify"), .verify(token: Self.oldToken)))
        let verified = try verifier.next("verified")
        #expect(verified.string("user").map { Array($0.utf8) } == Array(Self.koreanNFD.utf8))

        // No third spelling can join either group, nor a look-alike.
        for third in ["Strasse", "STRA\u{1E9E}E", "\u{017F}trasse", Self.koreanNFC, Self.koreanNFD, "ALICE"] {
            let verdict = try client.signupVerdict(third)
            #expect(verdict.string("message") == "Username already taken", "\(third)")
        }

        // Logging in to a twin does not reset the failures against its sibling.
        for _ in 0..<2 { #expect(try client.login("stra\u{00DF}e", "wrong")["message"] == .string("Invalid username or password")) }
        #expect(try client.login("STRASSE", "fourth password")["ok"] == .bool(true))
        #expect(try client.login("stra\u{00DF}e", "wrong")["message"] == .string("Invalid username or password"))
        let limited = try client.login("stra\u{00DF}e", "third password")
        #expect(limited.string("message") == "Too many attempts, try again later")

        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit() == 0)
        let queue = try DatabaseQueue(path: daemon.databasePath)
        let (count, migrations) = try queue.read { db in
            (try Int.fetchOne(db, sql: "SELECT count(*) FROM account"), try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations ORDER BY identifier"))
        }
        #expect(count == 5, "no account deleted")
        #expect(migrations == ["v1: accounts and tokens", "v2: Unicode identity keys", "v3: operator settings", "v4: kept collisions indexed"])
    }

    @Test("keys computed with another Unicode version are recomputed when the database opens")
    func recomputeOnKeyVersionChange() throws {
        let daemon = DaemonProcess()
        try Self.writeV1Database(at: daemon.databasePath)
        try daemon.start(.systemd, arguments: ["--idle-exit", "20"])
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit() == 0)

        // As if another ICU had written them: stale keys under another version.
        let queue = try DatabaseQueue(path: daemon.databasePath)
        try queue.write { db in
            try db.execute(sql: "UPDATE account SET identityKey = 'stale' || id")
            try db.execute(sql: "UPDATE similarityKey SET key = 'stale' || rowid")
            try db.execute(sql: "UPDATE identityKeyVersion SET version = 'NFKC_Casefold+UTS39-similarity/Unicode-1.0'")
        }
        try queue.close()

        let again = DaemonProcess(directory: daemon.directory, databasePath: daemon.databasePath)
        try again.start(.systemd, arguments: ["--idle-exit", "20"])
        let client = try again.connect()
        _ = try client.hello()
        #expect(try client.login("ALICE", "alice password")["ok"] == .bool(true), "alice's key is alice again")
        let (version, stale) = try DatabaseQueue(path: daemon.databasePath).read { db in
            (try String.fetchOne(db, sql: "SELECT version FROM identityKeyVersion"),
             try Int.fetchOne(db, sql: "SELECT count(*) FROM account WHERE identityKey LIKE 'stale%'"))
        }
        #expect(version?.hasPrefix("NFKC_Casefold+UTS39-similarity+look-alikes-") == true)
        #expect(version != "NFKC_Casefold+UTS39-similarity/Unicode-1.0")
        #expect(stale == 0)
    }
}
