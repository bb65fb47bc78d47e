import NIOConcurrencyHelpers

/// An account store in memory, for tests and `--database :memory:`.
final class InMemoryAccountStore: AccountStore {
    private struct State {
        var accounts: [String: StoredAccount] = [:]
        var tokens: [[UInt8]: (key: String, expiresAt: Int64)] = [:]
    }

    private let state = NIOLockedValueBox(State())

    func accountExists(key: String) -> Bool {
        state.withLockedValue { $0.accounts[key] != nil }
    }

    func createAccount(username: String, key: String, passwordHash: String, createdAt: Int64) -> Bool {
        state.withLockedValue { state in
            guard state.accounts[key] == nil else { return false }
            state.accounts[key] = StoredAccount(username: username, passwordHash: passwordHash)
            return true
        }
    }

    func account(key: String) -> StoredAccount? {
        state.withLockedValue { $0.accounts[key] }
    }

    func updatePasswordHash(key: String, passwordHash: String) {
        state.withLockedValue { $0.accounts[key]?.passwordHash = passwordHash }
    }

    func storeToken(hash: [UInt8], key: String, expiresAt: Int64) {
        state.withLockedValue { $0.tokens[hash] = (key, expiresAt) }
    }

    func tokenOwner(hash: [UInt8], now: Int64) -> String? {
        state.withLockedValue { state in
            guard let token = state.tokens[hash], token.expiresAt > now else { return nil }
            return state.accounts[token.key]?.username
        }
    }

    func deleteExpiredTokens(now: Int64) -> Int {
        state.withLockedValue { state in
            let before = state.tokens.count
            state.tokens = state.tokens.filter { $0.value.expiresAt > now }
            return before - state.tokens.count
        }
    }
}
