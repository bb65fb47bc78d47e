import NIOConcurrencyHelpers
import UsernameIdentity

/// A store opened after the socket is served (issue 29, the cold start): SQLite's open, its
/// migrations checked and its WAL index made again took 1.5–2.5 ms, and the first `hello`
/// does not need any of it. Requests wait for the open (`StartGate`), so in practice every
/// call here finds the store open; a call made earlier waits for it, and one made after a
/// failed open fails as the open did.
final class OpeningAccountStore: AccountStore {
    private typealias Opening = Task<Result<any AccountStore, AccountStoreError>, Never>
    private let open: @Sendable () throws(AccountStoreError) -> any AccountStore
    private let opening = NIOLockedValueBox<Opening?>(nil)

    /// Opens with `open` at the first call (`opened`, or any of the store's).
    init(_ open: @escaping @Sendable () throws(AccountStoreError) -> any AccountStore) {
        self.open = open
    }

    /// The store, opened by the first caller on a thread of the global executor; every
    /// caller waits for that one open.
    func opened() async throws(AccountStoreError) -> any AccountStore {
        let task = opening.withLockedValue { opening in
            if let opening { return opening }
            let task = Opening.detached(priority: .userInitiated) { [open] in
                do throws(AccountStoreError) {
                    return .success(try open())
                } catch {
                    return .failure(error)
                }
            }
            opening = task
            return task
        }
        return try await task.value.get()
    }

    func availability(of identity: UsernameIdentity) async throws(AccountStoreError) -> NameAvailability {
        try await opened().availability(of: identity)
    }

    func createAccount(_ identity: UsernameIdentity, passwordHash: String, createdAt: Int64) async throws(AccountStoreError) -> NameAvailability {
        try await opened().createAccount(identity, passwordHash: passwordHash, createdAt: createdAt)
    }

    func account(for identity: UsernameIdentity) async throws(AccountStoreError) -> StoredAccount? {
        try await opened().account(for: identity)
    }

    func updatePasswordHash(accountID: Int64, passwordHash: String) async throws(AccountStoreError) {
        try await opened().updatePasswordHash(accountID: accountID, passwordHash: passwordHash)
    }

    func storeToken(hash: [UInt8], accountID: Int64, expiresAt: Int64) async throws(AccountStoreError) {
        try await opened().storeToken(hash: hash, accountID: accountID, expiresAt: expiresAt)
    }

    func tokenOwner(hash: [UInt8], now: Int64) async throws(AccountStoreError) -> String? {
        try await opened().tokenOwner(hash: hash, now: now)
    }

    func revokeToken(hash: [UInt8], now: Int64) async throws(AccountStoreError) -> Bool {
        try await opened().revokeToken(hash: hash, now: now)
    }

    func deleteExpiredTokens(now: Int64) async throws(AccountStoreError) -> Int {
        try await opened().deleteExpiredTokens(now: now)
    }

    func keptCollisions() async throws(AccountStoreError) -> [KeptCollision] {
        try await opened().keptCollisions()
    }

    func signupPause() async throws(AccountStoreError) -> StoredSignupPause? {
        try await opened().signupPause()
    }

    func setSignupPause(_ pause: StoredSignupPause?) async throws(AccountStoreError) {
        try await opened().setSignupPause(pause)
    }
}
