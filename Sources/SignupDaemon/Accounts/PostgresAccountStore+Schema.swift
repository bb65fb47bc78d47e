import Logging
import PostgresNIO

/// The PostgreSQL schema and its migrations, run once at start (`PostgresStoreStartup`) on
/// a connection of its own.
extension PostgresAccountStore {
    /// The advisory lock key serialising schema migrations across hosts ("signupd" in ASCII).
    static let migrationLockKey: Int64 = 0x7369_676e_7570_64

    /// The schema, versioned from the first one. Append migrations; never edit one.
    /// Every text a key is compared by is `COLLATE "C"`: bytes, as SQLite compares them.
    static let migrations: [(version: Int, name: String, statements: [String])] = [
        (1, "accounts, similarity keys, tokens, login failures", [
            """
            CREATE TABLE account (
                id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                username text NOT NULL,
                identity_key text COLLATE "C" NOT NULL,
                legacy_key text COLLATE "C",
                collides_with bigint,
                password_hash text NOT NULL,
                created_at bigint NOT NULL
            )
            """,
            "CREATE INDEX account_identity_key ON account (identity_key)",
            """
            CREATE TABLE similarity_key (
                key text COLLATE "C" NOT NULL,
                account_id bigint NOT NULL REFERENCES account (id) ON DELETE CASCADE,
                collides_with bigint
            )
            """,
            "CREATE UNIQUE INDEX similarity_key_unique ON similarity_key (key) WHERE collides_with IS NULL",
            "CREATE INDEX similarity_key_any ON similarity_key (key)",
            "CREATE INDEX similarity_key_account ON similarity_key (account_id)",
            "CREATE TABLE identity_key_version (version text NOT NULL)",
            "INSERT INTO identity_key_version (version) VALUES ('')",
            """
            CREATE TABLE token (
                hash bytea PRIMARY KEY,
                account_id bigint NOT NULL REFERENCES account (id) ON DELETE CASCADE,
                expires_at bigint NOT NULL
            )
            """,
            "CREATE INDEX token_expires_at ON token (expires_at)",
            """
            CREATE TABLE login_failure (
                uid bigint NOT NULL,
                skeleton text COLLATE "C" NOT NULL,
                account_id bigint,
                at timestamptz NOT NULL DEFAULT clock_timestamp()
            )
            """,
            "CREATE INDEX login_failure_uid_skeleton ON login_failure (uid, skeleton, at)",
            "CREATE INDEX login_failure_skeleton ON login_failure (skeleton, at)",
        ]),
        (2, "login failures per front-end client", [
            // '' for a local peer; a trusted front end's client otherwise (`PeerKey.storedClient`).
            "ALTER TABLE login_failure ADD COLUMN client text COLLATE \"C\" NOT NULL DEFAULT ''",
            "DROP INDEX login_failure_uid_skeleton",
            "CREATE INDEX login_failure_peer_skeleton ON login_failure (uid, client, skeleton, at)",
            """
            CREATE TABLE login_known_client (
                uid bigint NOT NULL,
                client text COLLATE "C" NOT NULL,
                skeleton text COLLATE "C" NOT NULL,
                at timestamptz NOT NULL DEFAULT clock_timestamp(),
                PRIMARY KEY (uid, client, skeleton)
            )
            """,
        ]),
        (3, "operator settings", [
            // One row per setting; 'signup_pause' is absent while sign-up is open.
            """
            CREATE TABLE setting (
                name text COLLATE "C" PRIMARY KEY,
                note text,
                since bigint NOT NULL,
                by_uid bigint NOT NULL
            )
            """,
        ]),
    ]

    /// Brings the schema up to date on one connection, holding `pg_advisory_lock` so that
    /// hosts starting at once migrate one after the other (the later ones find nothing to
    /// do), and recomputes the keys when they were made with another ICU.
    static func migrate(_ connection: PostgresConnection, logger: Logger) async throws {
        _ = try await connection.query("SELECT pg_advisory_lock(\(migrationLockKey))", logger: logger).collect()
        do {
            _ = try await connection.query(
                "CREATE TABLE IF NOT EXISTS signupd_schema (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())",
                logger: logger
            ).collect()
            var applied = 0
            for try await version in try await connection.query("SELECT coalesce(max(version), 0) FROM signupd_schema", logger: logger).decode(Int.self) {
                applied = version
            }
            if let newest = migrations.last?.version, applied > newest {
                throw AccountStoreError.unavailable("the database has schema version \(applied), newer than this signupd knows (\(newest)); upgrade signupd on this host")
            }
            for migration in migrations where migration.version > applied {
                try await inTransaction(connection, logger: logger) {
                    for statement in migration.statements {
                        _ = try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger).collect()
                    }
                    _ = try await connection.query(
                        "INSERT INTO signupd_schema (version, name) VALUES (\(migration.version), \(migration.name))", logger: logger
                    ).collect()
                }
                logger.notice("database schema migrated", metadata: ["version": "\(migration.version)", "migration": "\(migration.name)"])
            }
            try await inTransaction(connection, logger: logger) { try await recomputeKeys(connection, logger: logger) }
        } catch {
            _ = try? await connection.query("SELECT pg_advisory_unlock(\(migrationLockKey))", logger: logger).collect()
            throw error
        }
        _ = try await connection.query("SELECT pg_advisory_unlock(\(migrationLockKey))", logger: logger).collect()
    }

    /// As `SQLiteAccountStore.recomputeKeys`: the keys of every account with this daemon's
    /// ICU, unless they were computed with the same key version.
    private static func recomputeKeys(_ connection: PostgresConnection, logger: Logger) async throws {
        var stored = ""
        for try await version in try await connection.query("SELECT version FROM identity_key_version FOR UPDATE", logger: logger).decode(String.self) {
            stored = version
        }
        guard stored != SimilarityKeyOwners.keyVersion else { return }
        _ = try await connection.query("DELETE FROM similarity_key", logger: logger).collect()
        var rows: [(Int64, String, String?)] = []
        for try await row in try await connection.query("SELECT id, username, legacy_key FROM account ORDER BY id", logger: logger)
            .decode((Int64, String, String?).self) {
            rows.append(row)
        }
        var owners = SimilarityKeyOwners()
        for (id, username, legacyKey) in rows {
            let identity = try SimilarityKeyOwners.identity(ofAccount: id, username: username, legacyKey: legacyKey)
            let (keyOwners, collidesWith) = owners.claim(identity.similarityKeys, for: id)
            for (similarity, owner) in zip(identity.similarityKeys, keyOwners) {
                _ = try await connection.query(
                    "INSERT INTO similarity_key (key, account_id, collides_with) VALUES (\(similarity), \(id), \(owner))", logger: logger
                ).collect()
            }
            _ = try await connection.query(
                "UPDATE account SET identity_key = \(identity.key), collides_with = \(collidesWith), legacy_key = \(identity.legacyKey.isEmpty ? nil : identity.legacyKey) WHERE id = \(id)",
                logger: logger
            ).collect()
        }
        _ = try await connection.query("UPDATE identity_key_version SET version = \(SimilarityKeyOwners.keyVersion)", logger: logger).collect()
        logger.notice("identity keys recomputed", metadata: ["accounts": "\(rows.count)", "keyVersion": "\(SimilarityKeyOwners.keyVersion)"])
    }

    /// BEGIN … COMMIT, or ROLLBACK and rethrow the body's own error.
    static func inTransaction<T>(_ connection: PostgresConnection, logger: Logger, _ body: () async throws -> T) async throws -> T {
        _ = try await connection.query("BEGIN", logger: logger).collect()
        do {
            let result = try await body()
            _ = try await connection.query("COMMIT", logger: logger).collect()
            return result
        } catch {
            _ = try? await connection.query("ROLLBACK", logger: logger).collect()
            throw error
        }
    }
}
