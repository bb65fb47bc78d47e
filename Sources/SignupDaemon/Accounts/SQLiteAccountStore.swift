import struct Foundation.Data
import GRDB
#if canImport(Glibc)
import Glibc
#endif
import UnixIO
import UsernameIdentity

/// The embedded default store: SQLite through GRDB, in WAL mode, with `synchronous=FULL`
/// so that a signup reported ok survives a crash or power loss. Several daemons may
/// share one database file; the unique index of similarity keys arbitrates races for a name.
final class SQLiteAccountStore: AccountStore {
    private let pool: DatabasePool
    private let path: String
    /// The opened file's device and inode: a write is refused when the path no longer
    /// names this file.
    private let identity: (dev: UInt64, ino: UInt64)?

    init(path: String) throws(AccountStoreError) {
        var configuration = Configuration()
        configuration.busyMode = .timeout(5)
        configuration.label = "signupd.accounts"
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = FULL")
        }
        do {
            pool = try DatabasePool(path: path, configuration: configuration)
            try Self.migrator.migrate(pool)
            // A daemon linked against another ICU (Unicode version) recomputes the keys.
            try pool.write { db in try Self.recomputeKeys(db) }
        } catch {
            throw .unavailable("cannot open \(path): \(Self.describe(error))\(Self.accessProblem(path))")
        }
        self.path = path
        identity = Self.fileIdentity(path)
    }

    private static func fileIdentity(_ path: String) -> (dev: UInt64, ino: UInt64)? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return (UInt64(info.st_dev), UInt64(info.st_ino))
    }

    /// Throws when the path no longer names the file that was opened.
    private func checkFileIsOurs() throws(AccountStoreError) {
        guard let identity else { return }
        guard let now = Self.fileIdentity(path) else {
            throw .fileReplaced("the database file \(path) was removed while signupd ran; restart signupd to open it again")
        }
        guard now == identity else {
            throw .fileReplaced("the database file \(path) was replaced or renamed while signupd ran; restart signupd to open it again")
        }
    }

    /// The schema, versioned from the first one. Append migrations; never edit one.
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1: accounts and tokens") { db in
            try db.create(table: "account") { table in
                table.autoIncrementedPrimaryKey("id")
                table.column("username", .text).notNull()
                table.column("usernameKey", .text).notNull().unique()
                table.column("passwordHash", .text).notNull()
                table.column("createdAt", .integer).notNull()
            }
            try db.create(table: "token") { table in
                table.primaryKey("hash", .blob)
                table.belongsTo("account", onDelete: .cascade).notNull()
                table.column("expiresAt", .integer).notNull().indexed()
            }
        }
        // v1 keyed accounts by `lowercased()` of the bytes as typed: canonically equal
        // names were two accounts. v2 keys them by NFKC_Casefold and refuses look-alikes:
        // each account's similarity keys (`UsernameIdentity.similarityKeys`) are rows of
        // `similarityKey`, unique among rows that are not kept collisions, so the database
        // alone arbitrates racing look-alike signups. The account table is rebuilt (SQLite
        // cannot drop v1's unique constraint), ids are kept so tokens stay valid, and the
        // keys are computed by `recomputeKeys`. v1 accounts that now collide are all kept
        // (`collidesWith`).
        migrator.registerMigration("v2: Unicode identity keys") { db in
            try db.create(table: "account_v2") { table in
                table.autoIncrementedPrimaryKey("id")
                table.column("username", .text).notNull()
                table.column("identityKey", .text).notNull()
                table.column("legacyKey", .text)
                table.column("collidesWith", .integer)
                table.column("passwordHash", .text).notNull()
                table.column("createdAt", .integer).notNull()
            }
            try db.execute(sql: """
                INSERT INTO account_v2 (id, username, identityKey, legacyKey, collidesWith, passwordHash, createdAt)
                SELECT id, username, usernameKey, usernameKey, 0, passwordHash, createdAt FROM account
                """)
            try db.drop(table: "account")
            try db.rename(table: "account_v2", to: "account")
            try db.execute(sql: "CREATE INDEX account_identityKey ON account(identityKey)")
            try db.create(table: "similarityKey") { table in
                table.column("key", .text).notNull()
                table.belongsTo("account", onDelete: .cascade).notNull()
                table.column("collidesWith", .integer)
            }
            try db.execute(sql: "CREATE UNIQUE INDEX similarityKey_key ON similarityKey(key) WHERE collidesWith IS NULL")
            try db.execute(sql: "CREATE INDEX similarityKey_any ON similarityKey(key)")
            try db.create(table: "identityKeyVersion") { table in
                table.column("version", .text).notNull()
            }
            try db.execute(sql: "INSERT INTO identityKeyVersion (version) VALUES ('')")
            try recomputeKeys(db)
        }
        migrator.registerMigration("v3: operator settings") { db in
            // One row per setting; `signupPause` is absent while sign-up is open.
            try db.create(table: "setting") { table in
                table.column("name", .text).primaryKey()
                table.column("note", .text)
                table.column("since", .integer).notNull()
                table.column("byUID", .integer).notNull()
            }
        }
        // The start reports kept collisions (`keptCollisionsQuery`); without an index of
        // them it read every similarity key: 87-102 ms of each start at 1,000,000 accounts
        // (issue 29's cold start). Few rows, so a small index.
        migrator.registerMigration("v4: kept collisions indexed") { db in
            try db.execute(sql: "CREATE INDEX similarityKey_kept ON similarityKey(key) WHERE collidesWith IS NOT NULL")
        }
        return migrator
    }

    /// Computes every account's key and similarity keys with this daemon's ICU, unless
    /// they were computed with the same key version. In account order, the first account
    /// with a similarity key owns it; a later one with that key is kept, its row marked
    /// `collidesWith` the owner (and the account too), and can still log in, but no new
    /// account can take a name colliding with either.
    static func recomputeKeys(_ db: Database) throws {
        let stored = try String.fetchOne(db, sql: "SELECT version FROM identityKeyVersion") ?? ""
        guard stored != SimilarityKeyOwners.keyVersion else { return }
        try db.execute(sql: "DELETE FROM similarityKey")
        let rows = try Row.fetchAll(db, sql: "SELECT id, username, legacyKey FROM account ORDER BY id")
        var owners = SimilarityKeyOwners()
        for row in rows {
            let id: Int64 = row["id"]
            let identity = try SimilarityKeyOwners.identity(ofAccount: id, username: row["username"], legacyKey: row["legacyKey"])
            let (keyOwners, collidesWith) = owners.claim(identity.similarityKeys, for: id)
            for (similarity, owner) in zip(identity.similarityKeys, keyOwners) {
                try db.execute(
                    sql: "INSERT INTO similarityKey (key, accountId, collidesWith) VALUES (?, ?, ?)",
                    arguments: [similarity, id, owner]
                )
            }
            try db.execute(
                sql: "UPDATE account SET identityKey = ?, collidesWith = ?, legacyKey = ? WHERE id = ?",
                arguments: [identity.key, collidesWith, identity.legacyKey.isEmpty ? nil : identity.legacyKey, id]
            )
        }
        try db.execute(sql: "UPDATE identityKeyVersion SET version = ?", arguments: [SimilarityKeyOwners.keyVersion])
    }

    func availability(of identity: UsernameIdentity) async throws(AccountStoreError) -> NameAvailability {
        try await run { try await pool.read { db in try Self.availability(of: identity, in: db) } }
    }

    private static func availability(of identity: UsernameIdentity, in db: Database) throws -> NameAvailability {
        if try Bool.fetchOne(db, sql: "SELECT 1 FROM account WHERE identityKey = ?", arguments: [identity.key]) ?? false {
            return .taken
        }
        let placeholders = Array(repeating: "?", count: identity.similarityKeys.count).joined(separator: ", ")
        if try Bool.fetchOne(
            db, sql: "SELECT 1 FROM similarityKey WHERE key IN (\(placeholders))", arguments: StatementArguments(identity.similarityKeys)
        ) ?? false {
            return .tooSimilar
        }
        return .available
    }

    func createAccount(_ identity: UsernameIdentity, passwordHash: String, createdAt: Int64) async throws(AccountStoreError) -> NameAvailability {
        try checkFileIsOurs()
        return try await run {
            do {
                try await pool.write { db in
                    try db.execute(
                        sql: "INSERT INTO account (username, identityKey, passwordHash, createdAt) VALUES (?, ?, ?, ?)",
                        arguments: [identity.display, identity.key, passwordHash, createdAt]
                    )
                    let id = db.lastInsertedRowID
                    for similarity in identity.similarityKeys {
                        try db.execute(sql: "INSERT INTO similarityKey (key, accountId) VALUES (?, ?)", arguments: [similarity, id])
                    }
                }
                return .available
            } catch let error as DatabaseError where error.extendedResultCode == .SQLITE_CONSTRAINT_UNIQUE {
                // The similarity key index refused it (the transaction rolled back); say whether the very name or a look-alike was first.
                let why = try await pool.read { db in try Self.availability(of: identity, in: db) }
                return why == .available ? .taken : why
            }
        }
    }

    func account(for identity: UsernameIdentity) async throws(AccountStoreError) -> StoredAccount? {
        try await run {
            try await pool.read { db in
                try Row.fetchOne(
                    db,
                    sql: "SELECT id, username, passwordHash FROM account WHERE identityKey = ? ORDER BY legacyKey IS ? DESC, id LIMIT 1",
                    arguments: [identity.key, identity.legacyKey]
                ).map { StoredAccount(id: $0["id"], username: $0["username"], passwordHash: $0["passwordHash"]) }
            }
        }
    }

    func updatePasswordHash(accountID: Int64, passwordHash: String) async throws(AccountStoreError) {
        try checkFileIsOurs()
        return try await run {
            try await pool.write { db in
                try db.execute(sql: "UPDATE account SET passwordHash = ? WHERE id = ?", arguments: [passwordHash, accountID])
            }
        }
    }

    func storeToken(hash: [UInt8], accountID: Int64, expiresAt: Int64) async throws(AccountStoreError) {
        try checkFileIsOurs()
        return try await run {
            try await pool.write { db in
                try db.execute(
                    sql: "INSERT INTO token (hash, accountId, expiresAt) VALUES (?, ?, ?)",
                    arguments: [Data(hash), accountID, expiresAt]
                )
            }
        }
    }

    func tokenOwner(hash: [UInt8], now: Int64) async throws(AccountStoreError) -> String? {
        try await run {
            try await pool.read { db in
                try String.fetchOne(
                    db,
                    sql: "SELECT account.username FROM token JOIN account ON account.id = token.accountId WHERE token.hash = ? AND token.expiresAt > ?",
                    arguments: [Data(hash), now]
                )
            }
        }
    }

    func revokeToken(hash: [UInt8], now: Int64) async throws(AccountStoreError) -> Bool {
        try checkFileIsOurs()
        return try await run {
            try await pool.write { db in
                let live = try Bool.fetchOne(db, sql: "SELECT expiresAt > ? FROM token WHERE hash = ?", arguments: [now, Data(hash)]) ?? false
                try db.execute(sql: "DELETE FROM token WHERE hash = ?", arguments: [Data(hash)])
                return live
            }
        }
    }

    func deleteExpiredTokens(now: Int64) async throws(AccountStoreError) -> Int {
        try await run {
            try await pool.write { db in
                try db.execute(sql: "DELETE FROM token WHERE expiresAt <= ?", arguments: [now])
                return db.changesCount
            }
        }
    }

    /// Every account with a kept collision, grouped by key. Read at every start: the kept
    /// rows come from their own index (v4), not a scan of every similarity key.
    static let keptCollisionsQuery = """
        SELECT similarityKey.key AS key, account.username AS username
        FROM similarityKey JOIN account ON account.id = similarityKey.accountId
        WHERE similarityKey.key IN (SELECT key FROM similarityKey WHERE collidesWith IS NOT NULL)
        ORDER BY similarityKey.key, account.id
        """

    func keptCollisions() async throws(AccountStoreError) -> [KeptCollision] {
        // Read at start only, through the writer, as `signupPause`.
        try await run {
            try pool.writeWithoutTransaction { db in
                let rows = try Row.fetchAll(db, sql: Self.keptCollisionsQuery)
                // One group per colliding key; accounts colliding on several keys are one group.
                var groups: [KeptCollision] = []
                var last: [UInt8]?
                for row in rows {
                    let key: String = row["key"]
                    if Array(key.utf8) != last { groups.append(KeptCollision(usernames: [])) }
                    last = Array(key.utf8)
                    groups[groups.count - 1].usernames.append(row["username"])
                }
                var seen: Set<[String]> = []
                return groups.filter { seen.insert($0.usernames).inserted }
            }
        }
    }

    /// How SQLite runs `keptCollisionsQuery`: its plan's steps (for tests).
    func keptCollisionsPlan() async throws(AccountStoreError) -> [String] {
        try await run {
            try await pool.read { db in
                try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + Self.keptCollisionsQuery).map { $0["detail"] as String }
            }
        }
    }

    func signupPause() async throws(AccountStoreError) -> StoredSignupPause? {
        // Read at start (an SQLite store does not poll it), before the socket opens: through
        // the writer, open since `init`, as no reader is yet; opening the first one made the
        // two reads at start 0.47 ms slower (issue 29). The first request that reads opens it.
        // Synchronously, on the starting task's thread: nothing else uses the writer yet, and
        // GRDB's asynchronous hop to its queue and back cost more than the query (0.4 ms of
        // the `kept collisions` stage, BENCHMARKS.md).
        try await run {
            try pool.writeWithoutTransaction { db in
                try Row.fetchOne(db, sql: "SELECT note, since, byUID FROM setting WHERE name = 'signupPause'").map { row in
                    StoredSignupPause(note: row["note"], since: row["since"], byUID: UInt32(truncatingIfNeeded: row["byUID"] as Int64))
                }
            }
        }
    }

    func setSignupPause(_ pause: StoredSignupPause?) async throws(AccountStoreError) {
        try checkFileIsOurs()
        return try await run {
            try await pool.write { db in
                if let pause {
                    try db.execute(
                        sql: "INSERT OR REPLACE INTO setting (name, note, since, byUID) VALUES ('signupPause', ?, ?, ?)",
                        arguments: [pause.note, pause.since, Int64(pause.byUID)]
                    )
                } else {
                    try db.execute(sql: "DELETE FROM setting WHERE name = 'signupPause'")
                }
            }
        }
    }

    /// Runs GRDB's async accesses (the statements run on GRDB's own queues; no caller's
    /// thread waits) and says why one failed.
    private func run<T>(_ body: () async throws -> T) async throws(AccountStoreError) -> T {
        do {
            return try await body()
        } catch {
            throw .unavailable(Self.describe(error))
        }
    }

    /// Why signupd may not use the database file or its directory, when that is why SQLite
    /// could not open it (its "unable to open database file" does not say): "" otherwise.
    private static func accessProblem(_ path: String) -> String {
        for (file, mode) in [(path, R_OK | W_OK), (PrivateDirectory.parent(of: path), R_OK | W_OK | X_OK)] where access(file, mode) != 0 && errno != ENOENT {
            return " (\(file): \(UnixIO.errnoText()) for uid \(geteuid()))"
        }
        return ""
    }

    /// A database error without statement arguments (GRDB omits them unless asked).
    private static func describe(_ error: any Error) -> String {
        if let error = error as? DatabaseError {
            return "SQLite error \(error.extendedResultCode.rawValue): \(error.message ?? "unknown")"
        }
        return "\(error)"
    }
}

