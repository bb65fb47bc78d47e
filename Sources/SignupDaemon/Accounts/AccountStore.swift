import UsernameIdentity

/// An account as the store keeps it. The password is only ever held as its hash.
struct StoredAccount: Sendable, Equatable {
    /// The store's id of the account: stable, never reused.
    var id: Int64
    /// The name as typed at signup (NFC), for display.
    var username: String
    var passwordHash: String
}

/// Why the store could not do what was asked. Nothing was written.
enum AccountStoreError: Error, Sendable, Equatable {
    /// The database failed (read-only, full disk, corruption, I/O).
    case unavailable(String)
    /// The database file was renamed, removed or replaced while signupd ran: writes would
    /// go to a file nobody will open again, so none is acknowledged until a restart.
    case fileReplaced(String)
}

/// Whether a name is free, as the store sees it.
enum NameAvailability: Sendable, Equatable {
    case available
    /// An account has the same key (`UsernameIdentity.key`).
    case taken
    /// An account shares a similarity key (`UsernameIdentity.similarityKeys`) but has another key.
    case tooSimilar
}

/// Two or more accounts created before keys were normalised that now share a similarity key.
/// All are kept and can log in; no new account may join them.
struct KeptCollision: Sendable, Equatable {
    var usernames: [String]
}

/// Where accounts and login tokens live. Every call is async and never blocks a thread while
/// it waits for the database (callers on an event loop bridge with `makeFutureWithLoopTask`).
/// Nothing above this protocol knows SQL.
///
/// Identity is `UsernameIdentity` (key and similarity keys from `Usernames.identity(of:)`); a
/// store never compares names as typed. Every implementation must pass the same
/// conformance suite (Tests/DaemonTests/IdentityPairsTests.swift), run through the daemon.
protocol AccountStore: Sendable {
    /// Whether a new account with this identity could be created now.
    func availability(of identity: UsernameIdentity) async throws(AccountStoreError) -> NameAvailability

    /// Creates an account, durably, unless its key or any of its similarity keys is taken. Uniqueness is the
    /// store's job (a unique index or one lock), never a check-then-insert by the caller.
    /// - Returns: `.available` when created, else why not.
    func createAccount(_ identity: UsernameIdentity, passwordHash: String, createdAt: Int64) async throws(AccountStoreError) -> NameAvailability

    /// The account a login with this identity means: the one with the same key. Among
    /// kept collisions with the same key, the one whose first-schema key equals the
    /// input's (`legacyKey`), else the oldest.
    func account(for identity: UsernameIdentity) async throws(AccountStoreError) -> StoredAccount?

    /// Replaces a password hash (after a login found its parameters outdated).
    func updatePasswordHash(accountID: Int64, passwordHash: String) async throws(AccountStoreError)

    /// Stores the hash of a login token for an account, valid until `expiresAt` (Unix seconds).
    func storeToken(hash: [UInt8], accountID: Int64, expiresAt: Int64) async throws(AccountStoreError)

    /// The username (as displayed) owning an unexpired token hash.
    func tokenOwner(hash: [UInt8], now: Int64) async throws(AccountStoreError) -> String?

    /// Deletes a login token (logout); whether it existed and had not expired.
    func revokeToken(hash: [UInt8], now: Int64) async throws(AccountStoreError) -> Bool

    /// Deletes expired tokens; returns how many.
    func deleteExpiredTokens(now: Int64) async throws(AccountStoreError) -> Int

    /// Accounts kept although they collide under the current keys (from a migration).
    func keptCollisions() async throws(AccountStoreError) -> [KeptCollision]

    /// The operator's sign-up pause (issue 26), nil when sign-up is open. Every host
    /// sharing the store sees the same.
    func signupPause() async throws(AccountStoreError) -> StoredSignupPause?

    /// Pauses sign-up (or opens it again, nil) for every host sharing the store.
    func setSignupPause(_ pause: StoredSignupPause?) async throws(AccountStoreError)
}

/// Sign-up paused, as stored: the operator's words, since when, and who paused it.
struct StoredSignupPause: Sendable, Equatable {
    var note: String?
    /// Seconds since the Unix epoch.
    var since: Int64
    var byUID: UInt32
}
