import PostgresNIO

/// `SharedLoginFailures` in the PostgreSQL store's `login_failure` table. Ages are measured
/// by the database's clock, so hosts whose clocks differ still agree.
struct PostgresLoginFailures: SharedLoginFailures {
    /// How long a failure counts (as `LoginRateLimiter`: an hour).
    static let memorySeconds = 3600
    /// The window of the per-name limit over all uids (ten minutes).
    static let globalWindowSeconds = 600

    let store: PostgresAccountStore

    func refuses(uid: UInt32, skeleton: String, limit: Int, globalLimit: Int) async throws(AccountStoreError) -> Bool {
        try await store.call { client in
            let rows = try await client.query("""
                SELECT count(*) FILTER (WHERE uid = \(Int64(uid)))::bigint,
                       coalesce(floor(extract(epoch FROM clock_timestamp() - max(at) FILTER (WHERE uid = \(Int64(uid)))) * 1000), 0)::bigint,
                       count(*) FILTER (WHERE at > clock_timestamp() - \(Self.globalWindowSeconds) * interval '1 second')::bigint
                FROM login_failure
                WHERE skeleton = \(skeleton) AND at > clock_timestamp() - \(Self.memorySeconds) * interval '1 second'
                """)
            for try await (failures, sinceLastMilliseconds, global) in rows.decode((Int64, Int64, Int64).self) {
                return LoginRateLimiter.refuses(
                    failures: Int(failures), sinceLast: UInt64(max(0, sinceLastMilliseconds)) * 1_000_000,
                    globalFailures: Int(global), limit: limit, globalLimit: globalLimit
                )
            }
            return false
        }
    }

    func recordFailure(uid: UInt32, skeleton: String, accountID: Int64?) async throws(AccountStoreError) {
        try await store.call { client in
            _ = try await client.query(
                "INSERT INTO login_failure (uid, skeleton, account_id) VALUES (\(Int64(uid)), \(skeleton), \(accountID))"
            ).collect()
        }
    }

    func forgetFailures(uid: UInt32, skeleton: String, accountID: Int64) async throws(AccountStoreError) {
        try await store.call { client in
            _ = try await client.query(
                "DELETE FROM login_failure WHERE uid = \(Int64(uid)) AND skeleton = \(skeleton) AND account_id = \(accountID)"
            ).collect()
        }
    }
}
