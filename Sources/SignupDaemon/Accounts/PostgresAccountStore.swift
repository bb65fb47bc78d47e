import Logging
import NIOConcurrencyHelpers
import NIOCore
import PostgresNIO
import UsernameIdentity

/// The shared store for several hosts: PostgreSQL through postgres-nio's `PostgresClient`
/// (a pool, run as a service of the daemon's ServiceLifecycle group). The same semantics
/// as `SQLiteAccountStore`: a partial unique index on similarity keys is the only arbiter of
/// "taken" (SQLSTATE 23505 rolls the signup back), tokens and login failures live in the
/// database so that every host sees them.
///
/// Every call awaits `PostgresClient` directly, at most `timeout` (`call`): no thread waits
/// for the server.
final class PostgresAccountStore: AccountStore {
    let client: PostgresClient
    let timeout: Duration
    let logger: Logger
    /// Open while the server cannot be reached: calls fail at once instead of each waiting
    /// `timeout` for a server that is down; one probe at a time asks whether it is back.
    let breaker = NIOLockedValueBox(StoreCircuitBreaker())
    /// Where the server is, for probes and for saying which server refused.
    let probe: PostgresProbe
    /// Where a call's deadline is kept.
    let timers: any EventLoopGroup

    init(client: PostgresClient, timeout: Duration, probe: PostgresProbe, timers: any EventLoopGroup, logger: Logger) {
        self.client = client
        self.timeout = timeout
        self.probe = probe
        self.timers = timers
        self.logger = logger
    }

    // MARK: AccountStore

    func availability(of identity: UsernameIdentity) async throws(AccountStoreError) -> NameAvailability {
        try await call { client in try await Self.availability(of: identity, on: client) }
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

    func createAccount(_ identity: UsernameIdentity, passwordHash: String, createdAt: Int64) async throws(AccountStoreError) -> NameAvailability {
        try await call { [logger] client in
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

    func account(for identity: UsernameIdentity) async throws(AccountStoreError) -> StoredAccount? {
        try await call { client in
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

    func updatePasswordHash(accountID: Int64, passwordHash: String) async throws(AccountStoreError) {
        try await call { client in
            _ = try await client.query("UPDATE account SET password_hash = \(passwordHash) WHERE id = \(accountID)").collect()
        }
    }

    func storeToken(hash: [UInt8], accountID: Int64, expiresAt: Int64) async throws(AccountStoreError) {
        try await call { client in
            _ = try await client.query(
                "INSERT INTO token (hash, account_id, expires_at) VALUES (\(ByteBuffer(bytes: hash)), \(accountID), \(expiresAt))"
            ).collect()
        }
    }

    func signupPause() async throws(AccountStoreError) -> StoredSignupPause? {
        try await call { client in
            let rows = try await client.query("SELECT note, since, by_uid FROM setting WHERE name = 'signup_pause'")
            for try await (note, since, uid) in rows.decode((String?, Int64, Int64).self) {
                return StoredSignupPause(note: note, since: since, byUID: UInt32(truncatingIfNeeded: uid))
            }
            return nil
        }
    }

    func setSignupPause(_ pause: StoredSignupPause?) async throws(AccountStoreError) {
        try await call { client in
            if let pause {
                _ = try await client.query("""
                    INSERT INTO setting (name, note, since, by_uid) VALUES ('signup_pause', \(pause.note), \(pause.since), \(Int64(pause.byUID)))
                    ON CONFLICT (name) DO UPDATE SET note = excluded.note, since = excluded.since, by_uid = excluded.by_uid
                    """).collect()
            } else {
                _ = try await client.query("DELETE FROM setting WHERE name = 'signup_pause'").collect()
            }
        }
    }

    func tokenOwner(hash: [UInt8], now: Int64) async throws(AccountStoreError) -> String? {
        try await call { client in
            let rows = try await client.query("""
                SELECT account.username FROM token JOIN account ON account.id = token.account_id
                WHERE token.hash = \(ByteBuffer(bytes: hash)) AND token.expires_at > \(now)
                """)
            for try await username in rows.decode(String.self) { return username }
            return nil
        }
    }

    func revokeToken(hash: [UInt8], now: Int64) async throws(AccountStoreError) -> Bool {
        try await call { client in
            let rows = try await client.query("DELETE FROM token WHERE hash = \(ByteBuffer(bytes: hash)) RETURNING expires_at > \(now)")
            for try await live in rows.decode(Bool.self) { return live }
            return false
        }
    }

    /// Every host runs this on its own timer. `SKIP LOCKED` lets hosts running it at the same
    /// moment delete disjoint rows instead of waiting on each other; a batch bounds each
    /// statement. Login failures older than the throttle remembers go too.
    func deleteExpiredTokens(now: Int64) async throws(AccountStoreError) -> Int {
        try await call { client in
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
    func keptCollisions() async throws(AccountStoreError) -> [KeptCollision] {
        try await call { client in
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
}
