import Testing
@testable import SignupDaemonCore

/// The login throttling rule, one function shared by the in-memory limiter and the
/// PostgreSQL store's failures of every host (`PostgresLoginFailures`).
@Suite("Login throttling rule")
struct LoginThrottleRuleTests {
    let minute = LoginRateLimiter.minute

    @Test("a uid's own first attempts never depend on other uids' failures")
    func ownAllowance() {
        for failures in 0..<5 {
            #expect(!LoginRateLimiter.refuses(failures: failures, sinceLast: 0, globalFailures: 1_000, limit: 5, globalLimit: 50))
        }
    }

    @Test("past its allowance, a uid waits out its back-off and the name's global limit")
    func pastAllowance() {
        #expect(LoginRateLimiter.refuses(failures: 5, sinceLast: minute - 1, globalFailures: 0, limit: 5, globalLimit: 50))
        #expect(!LoginRateLimiter.refuses(failures: 5, sinceLast: minute, globalFailures: 49, limit: 5, globalLimit: 50))
        #expect(LoginRateLimiter.refuses(failures: 5, sinceLast: minute, globalFailures: 50, limit: 5, globalLimit: 50))
        #expect(LoginRateLimiter.refuses(failures: 6, sinceLast: 2 * minute - 1, globalFailures: 0, limit: 5, globalLimit: 50))
        #expect(!LoginRateLimiter.refuses(failures: 6, sinceLast: 2 * minute, globalFailures: 0, limit: 5, globalLimit: 50))
    }

    @Test("the in-memory limiter: another uid past the global limit does not lock the owner out")
    func ownerNotLockedOut() throws {
        let limiter = LoginRateLimiter(limit: 2, globalLimit: 3)
        let start: UInt64 = 1
        for _ in 0..<2 {
            let attempt = try #require(limiter.reserve(peer: 100, key: "alice", now: start))
            limiter.failed(attempt, accountID: 1, now: start)
        }
        #expect(limiter.reserve(peer: 100, key: "alice", now: start + minute - 1) == nil)
        let third = try #require(limiter.reserve(peer: 100, key: "alice", now: start + minute))
        limiter.failed(third, accountID: 1, now: start + minute)
        // The name's global limit (3) is reached: the guesser's next back-off attempt is refused…
        #expect(limiter.reserve(peer: 100, key: "alice", now: start + 3 * minute) == nil)
        // …but the owner's own first attempts, a typo included, are not.
        let typo = try #require(limiter.reserve(peer: 1_000, key: "alice", now: start + 3 * minute))
        limiter.failed(typo, accountID: 1, now: start + 3 * minute)
        let retry = try #require(limiter.reserve(peer: 1_000, key: "alice", now: start + 3 * minute))
        limiter.succeeded(retry, accountID: 1, now: start + 3 * minute)
    }
}
