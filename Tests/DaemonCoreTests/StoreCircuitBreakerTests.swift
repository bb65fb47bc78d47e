import Testing
@testable import SignupDaemonCore

@Suite struct StoreCircuitBreakerTests {
    @Test("closed → open on a failure (logged once), refused at once with one probe at a time, closed on the first success (logged once)")
    func outageAndRecovery() {
        var breaker = StoreCircuitBreaker()
        #expect(breaker.admit() == .proceed)
        #expect(breaker.failed("connection refused by db:5432") == .becameUnavailable("connection refused by db:5432"))
        // A second failure in flight at the same time is not a second warning.
        #expect(breaker.failed("connection refused by db:5432") == .none)
        #expect(breaker.admit() == .refuseAndProbe("connection refused by db:5432"))
        #expect(breaker.admit() == .refuse("connection refused by db:5432"))
        breaker.probed(failure: "connection refused by db:5432")
        #expect(breaker.admit() == .refuseAndProbe("connection refused by db:5432"))
        breaker.probed(failure: nil)
        #expect(breaker.admit() == .proceed)
        // The server accepted the probe's connect but the call still failed: open again, quietly.
        #expect(breaker.failed("PostgreSQL did not answer within 5 s") == .none)
        #expect(breaker.admit() == .refuseAndProbe("PostgreSQL did not answer within 5 s"))
        breaker.probed(failure: nil)
        #expect(breaker.succeeded() == .becameAvailable(after: "PostgreSQL did not answer within 5 s"))
        #expect(breaker.succeeded() == .none)
        #expect(breaker.state == .closed)
    }
}
