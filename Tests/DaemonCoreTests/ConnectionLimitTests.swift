import NIOCore
import SignupProtocol
import Testing
@testable import SignupDaemonCore

/// Per-connection limits and budgets, with virtual time.
@Suite struct ConnectionLimitTests {
    @Test func sessionsPerConnectionAreCapped() async throws {
        let daemon = try InProcessDaemon(limits: ServerLimits(maxLineBytes: 65536, maxSessionsPerConnection: 2, maxOutputBytes: 1 << 20))
        let client = try await daemon.connect()
        for id in 1...3 { try await client.send(#"{"op":"open","form":"login","id":\#(id)}"#) }
        let events = try await client.sync()
        #expect(events.filter { $0.event == "opened" }.count == 2)
        let error = try #require(events.last)
        #expect(error.event == "error" && error.string("code") == "limit_exceeded" && error["id"] == .number("3"))
        #expect(error.string("message") == "at most 2 sessions per connection")
        try await daemon.stop()
    }

    @Test func aTooLongLineIsRefusedAndTheNextOneServed() async throws {
        let daemon = try InProcessDaemon(limits: ServerLimits(maxLineBytes: 64, maxSessionsPerConnection: 16, maxOutputBytes: 1 << 20))
        let client = try await daemon.connect()
        try await client.send(#"{"op":"ping","id":""# + String(repeating: "x", count: 100) + #""}"#)
        let events = try await client.sync()
        #expect(events.count == 1)
        #expect(events.first?.string("code") == "line_too_long")
        #expect(events.first?.string("message") == "line longer than 64 bytes; discarded")
        try await daemon.stop()
    }

    @Test func theRequestBudgetRefillsWithTime() async throws {
        let daemon = try InProcessDaemon(expensiveRequestsPerSecond: 2)
        let client = try await daemon.connect()
        // Bursts of twice the rate: four describes pass, the fifth is refused.
        for id in 1...5 { try await client.send(#"{"op":"describe","id":\#(id)}"#) }
        var events = try await client.sync()
        #expect(events.map(\.event) == ["description", "description", "description", "description", "error"])
        #expect(events.last?.string("code") == "rate_limited" && events.last?["id"] == .number("5"))
        // Without time passing, still refused; half a second gives back one token.
        try await client.send(#"{"op":"describe","id":6}"#)
        #expect(try await client.sync().map(\.event) == ["error"])
        await daemon.advance(by: .milliseconds(500))
        try await client.send(#"{"op":"describe","id":7}"#)
        try await client.send(#"{"op":"describe","id":8}"#)
        events = try await client.sync()
        #expect(events.map(\.event) == ["description", "error"])
        try await daemon.stop()
    }

    /// A front end checks the token on every page it serves: `verify` (and `logout`) are not
    /// budgeted like `open` (issue 23: 150 verifies on one connection got 50 rate_limited).
    @Test func tokenChecksHaveABudgetOfTheirOwn() async throws {
        let daemon = try InProcessDaemon(expensiveRequestsPerSecond: 2)
        let client = try await daemon.connect()
        for id in 1...150 { try await client.send(#"{"op":"verify","token":"nope","id":\#(id)}"#) }
        let events = try await client.sync()
        #expect(events.count == 150 && events.allSatisfy { $0.string("code") == "invalid_token" })
        // The budget of open, describe and the rest is untouched by them: bursts of four still pass.
        for id in 151...155 { try await client.send(#"{"op":"describe","id":\#(id)}"#) }
        #expect(try await client.sync().map(\.event) == ["description", "description", "description", "description", "error"])
        try await daemon.stop()
    }

    @Test func tokenChecksAreStillBoundedPerConnection() async throws {
        let daemon = try InProcessDaemon(tokenChecksPerSecond: 2)
        let client = try await daemon.connect()
        for id in 1...4 { try await client.send(#"{"op":"verify","token":"nope","id":\#(id)}"#) }
        try await client.send(#"{"op":"logout","token":"nope","id":5}"#)
        let events = try await client.sync()
        #expect(events.map { $0.string("code") } == ["invalid_token", "invalid_token", "invalid_token", "invalid_token", "rate_limited"])
        try await daemon.stop()
    }

    @Test func anIdleConnectionIsClosedOnlyWhenItHoldsNoSession() async throws {
        let daemon = try InProcessDaemon(idleConnectionTimeout: .seconds(10))
        let idle = try await daemon.connect()
        let holding = try await daemon.connect()
        try await holding.send(#"{"op":"open","form":"login"}"#)
        _ = try await holding.sync()
        await daemon.advance(by: .seconds(9))
        #expect(idle.isOpen)
        try await idle.send(#"{"op":"ping"}"#)  // a request restarts the count
        _ = try await idle.written()
        await daemon.advance(by: .seconds(9))
        #expect(idle.isOpen)
        await daemon.advance(by: .seconds(1))
        let bye = try await idle.written()
        #expect(bye.map(\.event) == ["bye"])
        #expect(bye.first?.string("reason") == "idle: no request for 10 seconds")
        #expect(!idle.isOpen)
        await daemon.advance(by: .seconds(60))
        #expect(holding.isOpen)
        try await daemon.stop()
    }

    @Test func connectionsPastTheLimitAreRefusedWithAReason() async throws {
        let daemon = try InProcessDaemon(maxConnections: 1)
        _ = try await daemon.connect()
        let refused = try await daemon.connect(readHello: false)
        let events = try await refused.written()
        #expect(events.map(\.event) == ["error", "bye"])
        #expect(events.first?.string("code") == "limit_exceeded")
        #expect(events.last?.string("reason") == "too many connections (limit 1)")
        #expect(!refused.isOpen)
        try await daemon.stop()
    }
}
