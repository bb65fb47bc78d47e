import UsernameIdentity

/// The rule every store applies when it recomputes similarity keys (after a migration or an
/// ICU change), walking accounts in id order: the first account with a key owns it; a later
/// one with the same key is kept, marked as colliding with that owner. One place, so that
/// SQLite and PostgreSQL cannot come to disagree on who owns a name.
struct SimilarityKeyOwners {
    /// The version stored with the keys: a daemon whose keys differ (another ICU, phone
    /// numbers as E.164) recomputes them at start.
    static var keyVersion: String { Usernames.keyVersion + "+tel-E.164" }

    /// Keyed by bytes: Swift's String == compares canonically, the stores compare bytes.
    private var owners: [[UInt8]: Int64] = [:]

    /// Account `id`'s identity, or the store's refusal to go on without it.
    /// A phone number stored before identities were E.164 (`tel:13800138000`) gets the
    /// key of its E.164 form, so that it logs in however the number is written; two that
    /// then name one number collide like look-alike names (kept, reported at start).
    static func identity(ofAccount id: Int64, username: String, legacyKey: String?) throws(AccountStoreError) -> UsernameIdentity {
        // A re-keyed number keeps its old key as its legacy key: of two accounts that now
        // name one number, each logs in as it was first written.
        let migrated = PhoneIdentity.migrated(username)
        guard let identity = Usernames.storedIdentity(of: migrated ?? username, legacyKey: legacyKey ?? (migrated == nil ? "" : username)) else {
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
