import SignupProtocol
import Testing
@testable import SignupDaemonCore

/// The login limit runs on the daemon's clock: here virtual time, through a connection.
@Suite struct LoginBackoffTests {
    @Test func failedLoginsBackOffForAMinuteOfTheDaemonsClock() async throws {
        let daemon = try InProcessDaemon()
        let client = try await daemon.connect()
        _ = try await client.signUp("alice", "correct horse")
        try await client.send(#"{"op":"open","form":"login"}"#)
        try await client.send(#"{"op":"set","field":"username","value":"alice"}"#)
        try await client.send(#"{"op":"set","field":"password","value":"wrong horse"}"#)
        func attempt() async throws -> String? {
            try await client.send(#"{"op":"submit"}"#)
            return try await client.next("result").match.string("messageId")
        }
        let wrong = "username.invalid_credentials", limited = "login.rate_limited"
        var answers: [String?] = []
        for _ in 1...6 { answers.append(try await attempt()) }
        #expect(answers == [wrong, wrong, wrong, wrong, wrong, limited])
        // A minute of the daemon's clock, not of the test's: nothing else moves it.
        await daemon.advance(by: .seconds(59))
        let early = try await attempt()
        #expect(early == limited)
        await daemon.advance(by: .seconds(1))
        let later = try await attempt()
        #expect(later == wrong)
        try await daemon.stop()
    }
}
