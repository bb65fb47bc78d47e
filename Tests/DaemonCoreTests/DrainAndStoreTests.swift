import NIOCore
import SignupProtocol
import Testing
@testable import SignupDaemonCore

/// Shutdown drain and the account stores behind a real signup, login and verify.
@Suite struct DrainAndStoreTests {
    @Test(arguments: [InProcessDaemon.StoreKind.memory, .sqliteFile])
    func signupLoginAndVerify(store: InProcessDaemon.StoreKind) async throws {
        let daemon = try InProcessDaemon(store: store)
        let client = try await daemon.connect()
        let result = try await client.signUp("alice", "correct horse")
        #expect(result["ok"] == .bool(true) && result.string("user") == "alice")

        try await client.send(#"{"op":"open","form":"login"}"#)
        try await client.send(#"{"op":"set","field":"username","value":"alice"}"#)
        try await client.send(#"{"op":"set","field":"password","value":"correct horse"}"#)
        try await client.send(#"{"op":"submit"}"#)
        let login = try await client.next("result").match
        let token = try #require(login.string("token"))
        try await client.send(#"{"op":"verify","token":"\#(token)","id":"v"}"#)
        let verified = try await client.next("verified").match
        #expect(verified.string("user") == "alice" && verified["id"] == .string("v"))
        try await daemon.stop()
    }

    @Test func drainingRefusesNewWorkThenSaysByeToEveryone() async throws {
        let daemon = try InProcessDaemon()
        let client = try await daemon.connect()
        try await client.send(#"{"op":"open","form":"login"}"#)
        _ = try await client.sync()
        let registry = daemon.services.registry
        let drain = ShutdownDrain(registry: registry, grace: .seconds(20)).begin(on: daemon.loop)

        try await client.send(#"{"op":"open","form":"login","id":1}"#)
        try await client.send(#"{"op":"submit","id":2}"#)
        let refused = try await client.sync()
        #expect(refused.map { $0.string("code") } == ["shutting_down", "shutting_down"])
        let late = try await daemon.connect(readHello: false)
        #expect(try await late.written().map(\.event) == ["error", "bye"])

        await drain.finish(reason: "shutdown")
        let bye = try await client.written()
        #expect(bye.map(\.event) == ["bye"] && bye.first?.string("reason") == "shutdown")
        #expect(!client.isOpen)
        #expect(registry.connectionCount == 0 && daemon.services.directory.count == 0)
        try await daemon.stop()
    }

    /// A login that never finishes holds the drain for the grace period of virtual time, no
    /// longer: then every client gets `bye`.
    @Test func theDrainWaitsForSubmitsAtMostTheGracePeriod() async throws {
        try await InProcessDaemon.withStalledStore(form: "login") { daemon, client in
            try await client.send(#"{"op":"set","field":"username","value":"frank"}"#)
            try await client.send(#"{"op":"set","field":"password","value":"secret words"}"#)
            try await client.send(#"{"op":"submit","id":"s"}"#)
            #expect(try await client.sync().contains { $0.event == "busy" && $0["value"] == .bool(true) })

            let drain = ShutdownDrain(registry: daemon.services.registry, grace: .seconds(20)).begin(on: daemon.loop)
            async let finished: Void = drain.finish(reason: "shutdown")
            // The login holds the drain: no bye before the grace period has passed.
            await daemon.advance(by: .seconds(19))
            #expect(try await client.written().isEmpty)
            await daemon.advance(by: .seconds(1))
            let bye = try await client.next("bye").match
            #expect(bye.string("reason") == "shutdown")
            await finished
            #expect(!client.isOpen)
        }
    }

    @Test func aHalfClosedClientIsAnsweredThenClosed() async throws {
        let daemon = try InProcessDaemon()
        let client = try await daemon.connect()
        try await client.sendRaw(#"{"op":"ping","id":1}"# + "\n" + #"{"op":"ping","id":2}"#)  // the last line unterminated
        try await client.shutdownInput()
        let events = try await client.written()
        #expect(events.map { $0["id"] } == [.number("1"), .number("2")])
        #expect(!client.isOpen)
        try await daemon.stop()
    }
}

