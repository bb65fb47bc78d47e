/// Login failures kept where every host sees them (the PostgreSQL store), so that a uid
/// throttled on one host is throttled on all. Each host still reserves attempts in its own
/// `LoginRateLimiter` (parallel attempts on one host cannot overshoot); this is asked
/// before the password is checked, and told how it ended.
///
/// Async calls that never block a thread, like `AccountStore`'s. Keys are (peer uid, the
/// name's confusable skeleton), as in `LoginRateLimiter`: the uid of a web bridge that serves
/// several hosts is the same number on each when the hosts are set up alike.
protocol SharedLoginFailures: Sendable {
    /// Whether the failures recorded by all hosts refuse another attempt now.
    func refuses(peer: PeerKey, device: SessionOwner?, skeleton: String, limit: Int, globalLimit: Int, backstop: Int) async throws(AccountStoreError) -> Bool
    /// Records a failed attempt against `accountID` (nil: no such account).
    func recordFailure(peer: PeerKey, skeleton: String, accountID: Int64?) async throws(AccountStoreError)
    /// A login succeeded: that peer's failures against this account are forgotten, and a
    /// front-end client becomes known to the name (`LoginRateLimiter`'s backstop spares it).
    func forgetFailures(peer: PeerKey, device: SessionOwner?, skeleton: String, accountID: Int64) async throws(AccountStoreError)
}
