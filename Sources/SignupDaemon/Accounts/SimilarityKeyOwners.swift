import UsernameIdentity

/// The rule every store applies when it recomputes similarity keys (after a migration or an
/// ICU change), walking accounts in id order: the first account with a key owns it; a later
/// one with the same key is kept, marked as colliding with that owner. One place, so that
/// SQLite and PostgreSQL cannot come to disagree on who owns a name.
struct SimilarityKeyOwners {
    /// Keyed by bytes: Swift's String == compares canonically, the stores compare bytes.
    private var owners: [[UInt8]: Int64] = [:]

    /// Account `id`'s identity, or the store's refusal to go on without it.
    static func identity(ofAccount id: Int64, username: String, legacyKey: String?) throws(AccountStoreError) -> UsernameIdentity {
        guard let identity = Usernames.storedIdentity(of: username, legacyKey: legacyKey ?? "") else {
            throw AccountStoreError.unavailable("ICU cannot compute the key of account \(id)")
        }
        return identity
    }

    /// Claims `keys` for account `id`: for each key the earlier owner (nil when `id` now owns
    /// it), and the first of them, which is the account's `collidesWith`.
    mutating func claim(_ keys: [String], for id: Int64) -> (owners: [Int64?], collidesWith: Int64?) {
        var found: [Int64?] = []
        var collidesWith: Int64?
        for key in keys {
            let owner = owners[Array(key.utf8)]
            if owner == nil { owners[Array(key.utf8)] = id }
            collidesWith = collidesWith ?? owner
            found.append(owner)
        }
        return (found, collidesWith)
    }
}
