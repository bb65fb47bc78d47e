import PostgresNIO

/// `SharedLoginFailures` in the PostgreSQL store's `login_failure` table. Ages are measured
/// by the database's clock, so hosts whose clocks differ still agree.
struct PostgresLoginFailures: SharedLoginFailures {
    /// How long a failure counts (as `LoginRateLimiter`: an hour).
    static let memorySeconds = 3600
    /// The window of the per-name limit over all uids (ten minutes).
    static let globalWindowSeconds = 600

    let store: PostgresAccountStore

    /// How long a front-end client that logged in counts as known to the name (30 days).
    static let knownSeconds = 30 * 86_400

    func refuses(peer: PeerKey, device: SessionOwner?, skeleton: String, limit: Int, globalLimit: Int, backstop: Int) async throws(AccountStoreError) -> Bool {
        try await store.call { client in
            let rows = try await client.query("""
                SELECT count(*) FILTER (WHERE uid = \(Int64(peer.uid)) AND client = \(peer.storedClient))::bigint,
                       coalesce(floor(extract(epoch FROM clock_timestamp() - max(at) FILTER (WHERE uid = \(Int64(peer.uid)) AND client = \(peer.storedClient))) * 1000), 0)::bigint,
                       count(*) FILTER (WHERE at > clock_timestamp() - \(Self.globalWindowSeconds) * interval '1 second')::bigint,
                       count(*) FILTER (WHERE client <> '')::bigint,
                       EXISTS (SELECT 1 FROM login_known_client k WHERE k.uid = \(Int64(peer.uid)) AND k.client = \(device?.storedDevice ?? "")
                               AND k.skeleton = \(skeleton) AND k.at > clock_timestamp() - \(Self.knownSeconds) * interval '1 second')
                FROM login_failure
                WHERE skeleton = \(skeleton) AND at > clock_timestamp() - \(Self.memorySeconds) * interval '1 second'
                """)
            for try await (failures, sinceLastMilliseconds, global, clientFailures, known) in rows.decode((Int64, Int64, Int64, Int64, Bool).self) {
                return LoginRateLimiter.refuses(
                    failures: Int(failures), sinceLast: UInt64(max(0, sinceLastMilliseconds)) * 1_000_000,
                    globalFailures: Int(global), limit: limit, globalLimit: globalLimit,
                    isClient: peer.client != nil, known: device != nil && known, clientFailures: Int(clientFailures), backstop: backstop
                )
            }
            return false
        }
    }

    func recordFailure(peer: PeerKey, skeleton: String, accountID: Int64?) async throws(AccountStoreError) {
        try await store.call { client in
            _ = try await client.query(
                "INSERT INTO login_failure (uid, client, skeleton, account_id) VALUES (\(Int64(peer.uid)), \(peer.storedClient), \(skeleton), \(accountID))"
            ).collect()
        }
    }

    func forgetFailures(peer: PeerKey, device: SessionOwner?, skeleton: String, accountID: Int64) async throws(AccountStoreError) {
        try await store.call { client in
            _ = try await client.query(
                "DELETE FROM login_failure WHERE uid = \(Int64(peer.uid)) AND client = \(peer.storedClient) AND skeleton = \(skeleton) AND account_id = \(accountID)"
            ).collect()
            guard let device else { return }
            _ = try await client.query("""
                INSERT INTO login_known_client (uid, client, skeleton) VALUES (\(Int64(peer.uid)), \(device.storedDevice), \(skeleton))
                ON CONFLICT (uid, client, skeleton) DO UPDATE SET at = clock_timestamp()
                """).collect()
        }
    }
}
