/// An account as the store keeps it. The password is only ever held as its hash.
struct StoredAccount: Sendable, Equatable {
    var username: String
    var passwordHash: String
}

/// Why the store could not do what was asked. Nothing was written.
enum AccountStoreError: Error, Sendable, Equatable {
    /// The database failed (read-only, full disk, corruption, I/O).
    case unavailable(String)
}

/// Where accounts and login tokens live. Blocking calls: the daemon runs them on its
/// thread pools, never on an event loop. Nothing above this protocol knows SQL.
protocol AccountStore: Sendable {
    /// Whether an account with this case-folded key exists.
    func accountExists(key: String) throws(AccountStoreError) -> Bool

    /// Creates an account, durably, unless the key is taken. Uniqueness is the store's
    /// job (a unique index), never a check-then-insert by the caller.
    /// - Returns: false when the name is taken.
    func createAccount(username: String, key: String, passwordHash: String, createdAt: Int64) throws(AccountStoreError) -> Bool

    /// The account with this key, if any.
    func account(key: String) throws(AccountStoreError) -> StoredAccount?

    /// Replaces a password hash (after a login found its parameters outdated).
    func updatePasswordHash(key: String, passwordHash: String) throws(AccountStoreError)

    /// Stores the hash of a login token for an account, valid until `expiresAt` (Unix seconds).
    func storeToken(hash: [UInt8], key: String, expiresAt: Int64) throws(AccountStoreError)

    /// The username owning an unexpired token hash.
    func tokenOwner(hash: [UInt8], now: Int64) throws(AccountStoreError) -> String?

    /// Deletes expired tokens; returns how many.
    func deleteExpiredTokens(now: Int64) throws(AccountStoreError) -> Int
}

extension String {
    /// The case-insensitive identity of a username: two names with the same key are the
    /// same account.
    var usernameKey: String { lowercased() }
}
