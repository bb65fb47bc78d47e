import GRDB

/// The embedded default store: SQLite through GRDB, in WAL mode, with `synchronous=FULL`
/// so that a signup reported ok survives a crash or power loss. Several daemons may
/// share one database file; the unique index arbitrates races for a name.
final class SQLiteAccountStore: AccountStore {
    private let pool: DatabasePool

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
        } catch {
            throw .unavailable("cannot open \(path): \(Self.describe(error))")
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
        return migrator
    }

    func accountExists(key: String) throws(AccountStoreError) -> Bool {
        try run { try pool.read { db in try Bool.fetchOne(db, sql: "SELECT 1 FROM account WHERE usernameKey = ?", arguments: [key]) ?? false } }
    }

    func createAccount(username: String, key: String, passwordHash: String, createdAt: Int64) throws(AccountStoreError) -> Bool {
        try run {
            do {
                try pool.write { db in
                    try db.execute(
                        sql: "INSERT INTO account (username, usernameKey, passwordHash, createdAt) VALUES (?, ?, ?, ?)",
                        arguments: [username, key, passwordHash, createdAt]
                    )
                }
                return true
            } catch let error as DatabaseError where error.extendedResultCode == .SQLITE_CONSTRAINT_UNIQUE {
                return false
            }
        }
    }

    func account(key: String) throws(AccountStoreError) -> StoredAccount? {
        try run {
            try pool.read { db in
                try Row.fetchOne(db, sql: "SELECT username, passwordHash FROM account WHERE usernameKey = ?", arguments: [key])
                    .map { StoredAccount(username: $0["username"], passwordHash: $0["passwordHash"]) }
            }
        }
    }

    func updatePasswordHash(key: String, passwordHash: String) throws(AccountStoreError) {
        try run {
            try pool.write { db in
                try db.execute(sql: "UPDATE account SET passwordHash = ? WHERE usernameKey = ?", arguments: [passwordHash, key])
            }
        }
    }

    func storeToken(hash: [UInt8], key: String, expiresAt: Int64) throws(AccountStoreError) {
        try run {
            try pool.write { db in
                try db.execute(
                    sql: "INSERT INTO token (hash, accountId, expiresAt) SELECT ?, id, ? FROM account WHERE usernameKey = ?",
                    arguments: [Data(hash), expiresAt, key]
                )
            }
        }
    }

    func tokenOwner(hash: [UInt8], now: Int64) throws(AccountStoreError) -> String? {
        try run {
            try pool.read { db in
                try String.fetchOne(
                    db,
                    sql: "SELECT account.username FROM token JOIN account ON account.id = token.accountId WHERE token.hash = ? AND token.expiresAt > ?",
                    arguments: [Data(hash), now]
                )
            }
        }
    }

    func deleteExpiredTokens(now: Int64) throws(AccountStoreError) -> Int {
        try run {
            try pool.write { db in
                try db.execute(sql: "DELETE FROM token WHERE expiresAt <= ?", arguments: [now])
                return db.changesCount
            }
        }
    }

    private func run<T>(_ body: () throws -> T) throws(AccountStoreError) -> T {
        do {
            return try body()
        } catch {
            throw .unavailable(Self.describe(error))
        }
    }

    /// A database error without statement arguments (GRDB omits them unless asked).
    private static func describe(_ error: any Error) -> String {
        if let error = error as? DatabaseError {
            return "SQLite error \(error.extendedResultCode.rawValue): \(error.message ?? "unknown")"
        }
        return "\(error)"
    }
}

import struct Foundation.Data
