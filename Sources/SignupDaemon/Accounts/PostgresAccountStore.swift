import Dispatch
import FormEngine
import Logging
import NIOConcurrencyHelpers
import NIOCore
import PostgresNIO
import Synchronization
import UsernameIdentity

/// The shared store for several hosts: PostgreSQL through postgres-nio's `PostgresClient`
/// (a pool, run as a service of the daemon's ServiceLifecycle group). The same semantics
/// as `SQLiteAccountStore`: a partial unique index on similarity keys is the only arbiter of
/// "taken" (SQLSTATE 23505 rolls the signup back), tokens and login failures live in the
/// database so that every host sees them.
///
/// `AccountStore` is blocking: each call runs the query as a task and waits for it, at most
/// `timeout`, on the daemon's store or hash threads (never an event loop).
final class PostgresAccountStore: AccountStore {
    let client: PostgresClient
    private let timeout: Duration
    private let logger: Logger
    /// Open while the server cannot be reached: calls fail at once instead of each waiting
    /// `timeout` for a server that is down; one probe at a time asks whether it is back.
    private let breaker = NIOLockedValueBox(StoreCircuitBreaker())
    /// Where the server is, for probes and for saying which server refused.
    private let probe: PostgresProbe

    /// The advisory lock key serialising schema migrations across hosts ("signupd" in ASCII).
    static let migrationLockKey: Int64 = 0x7369_676e_7570_64

    init(client: PostgresClient, timeout: Duration, probe: PostgresProbe, logger: Logger) {
        self.client = client
        self.timeout = timeout
        self.probe = probe
        self.logger = logger
    }

    // MARK: Schema

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

    // MARK: AccountStore

    func availability(of identity: UsernameIdentity) throws(AccountStoreError) -> NameAvailability {
        try blocking { client in try await Self.availability(of: identity, on: client) }
    }

    private static func availability(of identity: UsernameIdentity, on client: PostgresClient) async throws -> NameAvailability {
        let rows = try await client.query("""
            SELECT EXISTS (SELECT 1 FROM account WHERE identity_key = \(identity.key)),
                   EXISTS (SELECT 1 FROM similarity_key WHERE key = ANY(\(identity.similarityKeys)))
            """)
        for try await (taken, similar) in rows.decode((Bool, Bool).self) {
            return taken ? .taken : similar ? .tooSimilar : .available
        }
        return .available
    }

    func createAccount(_ identity: UsernameIdentity, passwordHash: String, createdAt: Int64) throws(AccountStoreError) -> NameAvailability {
        try blocking { [logger] client in
            do {
                // One statement, so one implicit transaction: the similarity keys' unique
                // index refuses the whole row when any key is taken.
                _ = try await client.query("""
                    WITH created AS (
                        INSERT INTO account (username, identity_key, password_hash, created_at)
                        VALUES (\(identity.display), \(identity.key), \(passwordHash), \(createdAt))
                        RETURNING id
                    )
                    INSERT INTO similarity_key (key, account_id)
                    SELECT key, created.id FROM created, unnest(\(identity.similarityKeys)::text[]) AS key
                    """, logger: logger).collect()
                return .available
            } catch let error as PSQLError where error.serverInfo?[.sqlState] == "23505" {
                // Another host (or session) was first; say whether with the very name or a look-alike.
                let why = try await Self.availability(of: identity, on: client)
                return why == .available ? .taken : why
            }
        }
    }

    func account(for identity: UsernameIdentity) throws(AccountStoreError) -> StoredAccount? {
        try blocking { client in
            let rows = try await client.query("""
                SELECT id, username, password_hash FROM account WHERE identity_key = \(identity.key)
                ORDER BY legacy_key IS NOT DISTINCT FROM \(identity.legacyKey) DESC, id LIMIT 1
                """)
            for try await (id, username, hash) in rows.decode((Int64, String, String).self) {
                return StoredAccount(id: id, username: username, passwordHash: hash)
            }
            return nil
        }
    }

    func updatePasswordHash(accountID: Int64, passwordHash: String) throws(AccountStoreError) {
        try blocking { client in
            _ = try await client.query("UPDATE account SET password_hash = \(passwordHash) WHERE id = \(accountID)").collect()
        }
    }

    func storeToken(hash: [UInt8], accountID: Int64, expiresAt: Int64) throws(AccountStoreError) {
        try blocking { client in
            _ = try await client.query(
                "INSERT INTO token (hash, account_id, expires_at) VALUES (\(ByteBuffer(bytes: hash)), \(accountID), \(expiresAt))"
            ).collect()
        }
    }

    func tokenOwner(hash: [UInt8], now: Int64) throws(AccountStoreError) -> String? {
        try blocking { client in
            let rows = try await client.query("""
                SELECT account.username FROM token JOIN account ON account.id = token.account_id
                WHERE token.hash = \(ByteBuffer(bytes: hash)) AND token.expires_at > \(now)
                """)
            for try await username in rows.decode(String.self) { return username }
            return nil
        }
    }

    func revokeToken(hash: [UInt8], now: Int64) throws(AccountStoreError) -> Bool {
        try blocking { client in
            let rows = try await client.query("DELETE FROM token WHERE hash = \(ByteBuffer(bytes: hash)) RETURNING expires_at > \(now)")
            for try await live in rows.decode(Bool.self) { return live }
            return false
        }
    }

    /// Every host runs this on its own timer. `SKIP LOCKED` lets hosts running it at the same
    /// moment delete disjoint rows instead of waiting on each other; a batch bounds each
    /// statement. Login failures older than the throttle remembers go too.
    func deleteExpiredTokens(now: Int64) throws(AccountStoreError) -> Int {
        try blocking { client in
            var deleted = 0
            for try await count in try await client.query("""
                WITH expired AS (
                    SELECT hash FROM token WHERE expires_at <= \(now) LIMIT 10000 FOR UPDATE SKIP LOCKED
                ), gone AS (
                    DELETE FROM token WHERE hash IN (SELECT hash FROM expired) RETURNING 1
                )
                SELECT count(*)::bigint FROM gone
                """).decode(Int64.self) {
                deleted = Int(count)
            }
            _ = try await client.query(
                "DELETE FROM login_failure WHERE at < clock_timestamp() - \(PostgresLoginFailures.memorySeconds) * interval '1 second'"
            ).collect()
            return deleted
        }
    }

    /// PostgreSQL stores start on the Unicode keys: nothing was migrated from the first
    /// schema, so nothing can collide unless recomputed keys made it so.
    func keptCollisions() throws(AccountStoreError) -> [KeptCollision] {
        try blocking { client in
            let rows = try await client.query("""
                SELECT similarity_key.key, account.username
                FROM similarity_key JOIN account ON account.id = similarity_key.account_id
                WHERE similarity_key.key IN (SELECT key FROM similarity_key WHERE collides_with IS NOT NULL)
                ORDER BY similarity_key.key, account.id
                """)
            var groups: [KeptCollision] = []
            var last: [UInt8]?
            for try await (key, username) in rows.decode((String, String).self) {
                if Array(key.utf8) != last { groups.append(KeptCollision(usernames: [])) }
                last = Array(key.utf8)
                groups[groups.count - 1].usernames.append(username)
            }
            var seen: Set<[String]> = []
            return groups.filter { seen.insert($0.usernames).inserted }
        }
    }

    // MARK: Blocking bridge

    /// Runs `body` as a task and waits for it, at most `timeout`; any failure is the store
    /// being unavailable. While the server cannot be reached (`StoreCircuitBreaker`), calls
    /// fail at once with the real cause ("connection refused by host:port").
    func blocking<T: Sendable>(_ body: @escaping @Sendable (PostgresClient) async throws -> T) throws(AccountStoreError) -> T {
        switch breaker.withLockedValue({ $0.admit() }) {
        case .proceed: break
        case .refuse(let cause): throw .unavailable("PostgreSQL unreachable: \(cause)")
        case .refuseAndProbe(let cause):
            let probe = self.probe
            let breaker = self.breaker
            Task {
                let failure = await probe.reach()
                breaker.withLockedValue { $0.probed(failure: failure) }
            }
            throw .unavailable("PostgreSQL unreachable: \(cause)")
        }
        let result = NIOLockedValueBox<Result<T, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        let task = Task { [client] in
            let outcome: Result<T, any Error>
            do { outcome = .success(try await body(client)) } catch { outcome = .failure(error) }
            result.withLockedValue { $0 = outcome }
            done.signal()
        }
        if done.wait(timeout: .now() + .nanoseconds(Int(timeout.nanoseconds))) == .timedOut {
            task.cancel()
            // Refused connections leave the pool retrying and the call waiting: ask the socket.
            throw unreachable(probe.reachNow() ?? "PostgreSQL did not answer within \(timeout)")
        }
        switch result.withLockedValue({ $0 }) {
        case .success(let value):
            reached()
            return value
        case .failure(let error as AccountStoreError):
            reached()
            throw error
        case .failure(let error as PSQLError) where error.code == .server:
            reached()
            throw .unavailable(Self.describe(error))
        case .failure(let error as PSQLError): throw unreachable(Self.describe(error, endpoint: probe.endpoint))
        case .failure(let error): throw unreachable(Self.describeTLS(error))
        case nil: throw unreachable("no result")
        }
    }

    private func reached() {
        if case .becameAvailable(let cause) = breaker.withLockedValue({ $0.succeeded() }) {
            logger.notice("account store available again", metadata: ["database": "\(probe.endpoint)", "wasUnavailable": "\(cause)"])
        }
    }

    private func unreachable(_ cause: String) -> AccountStoreError {
        if case .becameUnavailable(let cause) = breaker.withLockedValue({ $0.failed(cause) }) {
            logger.warning("account store unavailable: requests are refused at once until it answers again", metadata: ["database": "\(probe.endpoint)", "cause": "\(cause)"])
        }
        return .unavailable("PostgreSQL unreachable: \(cause)")
    }

    /// The server's SQLSTATE and message, never the statement's bound values.
    static func describe(_ error: PSQLError, endpoint: String? = nil) -> String {
        if let info = error.serverInfo {
            return "PostgreSQL error \(info[.sqlState] ?? "?"): \(info[.message] ?? "unknown")"
        }
        if let endpoint, let underlying = error.underlying, "\(underlying)".contains("Connection refused") {
            return "connection refused by \(endpoint)"
        }
        // A server shutting down closes its connections before it refuses new ones.
        if error.code == .serverClosedConnection || error.code == .clientClosedConnection {
            return "the connection to \(endpoint ?? "PostgreSQL") was closed (the server stopped or restarted)"
        }
        // Connection and TLS failures: what the socket or the certificate check said;
        // PSQLError's own text is a placeholder, so it is never quoted.
        if let underlying = error.underlying, !(underlying is PSQLError) {
            return "PostgreSQL \(error.code): \(describeTLS(underlying))"
        }
        return "PostgreSQL \(error.code)"
    }

    /// A TLS or socket error in words, without BoringSSL's source paths (the build's
    /// `.build/checkouts/…` must never reach an administrator's log).
    static func describeTLS(_ error: any Error) -> String {
        let text = "\(error)"
        if text.contains("CERTIFICATE_VERIFY_FAILED") {
            return "the server's certificate is not signed by a trusted CA (sslrootcert, or the system's trust store without it)"
        }
        if text.contains("failedToValidateHostname") {
            return "the server's certificate does not name the host"
        }
        if text.contains("Connection refused") { return "connection refused" }
        if text.contains("noSuchFilesystemObject") { return "the CA file does not exist" }
        if text.contains("NO_CERTIFICATE_OR_CRL_FOUND") { return "the CA file holds no PEM certificate" }
        if let reason = text.range(of: #"OPENSSL_internal:[A-Z_]+"#, options: .regularExpression) {
            return "TLS: " + text[reason].dropFirst("OPENSSL_internal:".count).lowercased().replacingOccurrences(of: "_", with: " ")
        }
        return text.replacingOccurrences(of: #" at /[^ \])]*"#, with: "", options: .regularExpression)
    }
}
