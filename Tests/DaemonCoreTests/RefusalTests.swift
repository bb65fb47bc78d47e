import NIOCore
import SignupProtocol
import Testing
@testable import SignupDaemonCore

/// Refusals that leave state as it was: a value past its field's byte cap, and a uid
/// connecting faster than its connect budget (refused before any work, with `bye`).
@Suite struct RefusalTests {
    @Test func aValuePastTheCapIsRefusedAndTheFieldKeepsItsValue() async throws {
        let daemon = try InProcessDaemon(limits: ServerLimits(maxLineBytes: 65536, maxSessionsPerConnection: 4, maxOutputBytes: 1 << 20))
        let client = try await daemon.connect()
        try await client.send(#"{"op":"open","form":"login"}"#)
        let session = try #require(try await client.next("opened").match.string("session"))
        try await client.send(#"{"op":"set","field":"username","value":"carol"}"#)
        _ = try await client.sync()
        // Exactly the cap is taken (a change: the field is validated again); one byte
        // more is refused. Bytes are UTF-8 bytes: é is two.
        let atCap = String(repeating: "é", count: 510)
        try await client.send(#"{"op":"set","field":"username","value":"\#(atCap)"}"#)
        let taken = try await client.sync()
        #expect(!taken.isEmpty && taken.allSatisfy { $0.event != "error" })
        try await client.send(#"{"op":"set","field":"username","value":"carol"}"#)
        _ = try await client.sync()
        try await client.send(#"{"op":"set","field":"username","value":"\#(atCap)a","id":9}"#)
        let refused = try await client.sync()
        #expect(refused.count == 1)
        let error = try ServerEvent.decode(try #require(refused.first))
        #expect(
            error == .error(
                code: .valueTooLong, message: #"the value of "username" is longer than its 1020 bytes (UTF-8); not stored, the field keeps its previous value"#,
                session: session, id: .integer(9)
            )
        )
        // The field still holds "carol": setting it again changes nothing and says nothing.
        try await client.send(#"{"op":"set","field":"username","value":"carol"}"#)
        #expect(try await client.sync().isEmpty)
        try await daemon.stop()
    }

    @Test func aUidConnectingTooFastIsRefusedAtTheDoorUntilItsBudgetRefills() async throws {
        let daemon = try InProcessDaemon(connectsPerUIDPerSecond: 1)
        // Bursts of twice the rate.
        let first = try await daemon.connect()
        let second = try await daemon.connect()
        let third = try await daemon.connect(readHello: false)
        let words = try await third.written()
        #expect(words.map(\.event) == ["error", "bye"])
        #expect(words.first?.string("code") == "rate_limited")
        #expect(words.first?.string("message") == "uid 1000 connects too fast (limit 1 a second)")
        #expect(words.last?.string("reason") == words.first?.string("message"))
        #expect(!third.isOpen)
        #expect(daemon.services.registry.connectionCount == 2)
        // A second later one more token: served again.
        await daemon.advance(by: .seconds(1))
        let fourth = try await daemon.connect()
        try await fourth.send(#"{"op":"ping","id":1}"#)
        #expect(try await fourth.next().event == "pong")
        #expect(first.isOpen && second.isOpen)
        try await daemon.stop()
    }
}
