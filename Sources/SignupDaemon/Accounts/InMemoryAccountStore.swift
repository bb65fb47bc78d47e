import NIOConcurrencyHelpers
import UsernameIdentity

/// An account store in memory, for tests and `--database :memory:`. One lock makes
/// check-and-insert atomic. Keys and similarity keys are compared as exact scalar sequences
/// (`unicodeScalars`), never with Swift's canonical-equivalence `==`, so that this store
/// agrees with SQLite's byte comparison.
final class InMemoryAccountStore: AccountStore {
    private struct Account {
        var stored: StoredAccount
        var identity: UsernameIdentity
    }

    private struct State {
        var accounts: [Int64: Account] = [:]
        var byKey: [[Unicode.Scalar]: Int64] = [:]
        var bySimilarityKey: [[Unicode.Scalar]: Int64] = [:]
        var nextID: Int64 = 1
        var tokens: [[UInt8]: (accountID: Int64, expiresAt: Int64)] = [:]
        var signupPause: StoredSignupPause?

        func availability(of identity: UsernameIdentity) -> NameAvailability {
            if byKey[Array(identity.key.unicodeScalars)] != nil { return .taken }
            if identity.similarityKeys.contains(where: { bySimilarityKey[Array($0.unicodeScalars)] != nil }) { return .tooSimilar }
            return .available
        }
    }

    private let state = NIOLockedValueBox(State())

    func availability(of identity: UsernameIdentity) async -> NameAvailability {
        state.withLockedValue { $0.availability(of: identity) }
    }

    func createAccount(_ identity: UsernameIdentity, passwordHash: String, createdAt: Int64) async -> NameAvailability {
        state.withLockedValue { state in
            let availability = state.availability(of: identity)
            guard availability == .available else { return availability }
            let id = state.nextID
            state.nextID += 1
            state.accounts[id] = Account(stored: StoredAccount(id: id, username: identity.display, passwordHash: passwordHash), identity: identity)
            state.byKey[Array(identity.key.unicodeScalars)] = id
            for similarity in identity.similarityKeys { state.bySimilarityKey[Array(similarity.unicodeScalars)] = id }
            return .available
        }
    }

    func account(for identity: UsernameIdentity) async -> StoredAccount? {
        state.withLockedValue { state in
            state.byKey[Array(identity.key.unicodeScalars)].flatMap { state.accounts[$0]?.stored }
        }
    }

    func updatePasswordHash(accountID: Int64, passwordHash: String) async {
        state.withLockedValue { $0.accounts[accountID]?.stored.passwordHash = passwordHash }
    }

    func storeToken(hash: [UInt8], accountID: Int64, expiresAt: Int64) async {
        state.withLockedValue { $0.tokens[hash] = (accountID, expiresAt) }
    }

    func tokenOwner(hash: [UInt8], now: Int64) async -> String? {
        state.withLockedValue { state in
            guard let token = state.tokens[hash], token.expiresAt > now else { return nil }
            return state.accounts[token.accountID]?.stored.username
        }
    }

    func revokeToken(hash: [UInt8], now: Int64) async -> Bool {
        state.withLockedValue { state in
            guard let token = state.tokens.removeValue(forKey: hash) else { return false }
            return token.expiresAt > now
        }
    }

    func signupPause() async -> StoredSignupPause? {
        state.withLockedValue { $0.signupPause }
    }

    func setSignupPause(_ pause: StoredSignupPause?) async {
        state.withLockedValue { $0.signupPause = pause }
    }

    func deleteExpiredTokens(now: Int64) async -> Int {
        state.withLockedValue { state in
            let before = state.tokens.count
            state.tokens = state.tokens.filter { $0.value.expiresAt > now }
            return before - state.tokens.count
        }
    }

    /// A store in memory starts empty: nothing was migrated, nothing collides.
    func keptCollisions() async -> [KeptCollision] { [] }
}
