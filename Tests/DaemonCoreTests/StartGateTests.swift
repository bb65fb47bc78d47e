import NIOConcurrencyHelpers
import NIOCore
import Testing
import UsernameIdentity

@testable import SignupDaemonCore

/// The socket is served before the start has finished (issue 29, the cold start): clients
/// are greeted at once, and what they send waits for the store's open (`StartGate`,
/// `OpeningAccountStore`).
@Suite struct StartGateTests {
    @Test func greetedAtOnceAndRequestsWaitForTheStartThenRunInOrder() async throws {
        let gate = StartGate(closed: true)
        let daemon = try InProcessDaemon(startGate: gate)
        // `connect` reads the `hello`: it came although the start has not finished.
        let client = try await daemon.connect()
        try await client.send(#"{"op":"ping","id":1}"#)
        try await client.send(#"{"op":"open","form":"signup","id":2}"#)
        await daemon.advance(by: .milliseconds(10))
        #expect(try await client.written().isEmpty)

        gate.open()
        await daemon.loop.run()
        // Both are answered on the loop, at once, in the order sent.
        let answers = try await client.written()
        #expect(answers.count >= 2 && answers.first?.event == "pong" && answers.first?["id"] == .number("1"))
        #expect(answers.count >= 2 && answers[1].event == "opened" && answers[1]["id"] == .number("2"))
        // Later connections are not held at all.
        let later = try await daemon.connect()
        #expect(try await later.sync().isEmpty)
        try await daemon.stop()
    }

    @Test func aClientGoneBeforeTheStartEndsLeavesTheOthersServed() async throws {
        let gate = StartGate(closed: true)
        let daemon = try InProcessDaemon(startGate: gate)
        let gone = try await daemon.connect()
        let staying = try await daemon.connect()
        try await gone.send(#"{"op":"open","form":"signup"}"#)
        try await gone.disconnect()
        try await staying.send(#"{"op":"ping","id":"a"}"#)
        gate.open()
        await daemon.loop.run()
        let pong = try await staying.written()
        #expect(pong.count == 1 && pong.first?.event == "pong" && pong.first?["id"] == .string("a"))
        #expect(daemon.services.directory.count == 0)
        try await daemon.stop()
    }

    @Test func aFailedStartTellsEveryGreetedClientAndAnyGreetedAfter() async throws {
        let gate = StartGate(closed: true)
        let daemon = try InProcessDaemon(startGate: gate)
        let waiting = try await daemon.connect()
        try await waiting.send(#"{"op":"open","form":"signup","id":1}"#)
        gate.fail()
        await daemon.loop.run()
        let said = try await waiting.written()
        #expect(said.count == 1 && said.first?.event == "bye" && said.first?.string("reason") == "start failed")
        #expect(!waiting.isOpen)
        // Greeted after the failure (an accept NIO was finishing): told at once, not held.
        let late = try await daemon.connect()
        await daemon.loop.run()
        let told = try await late.written()
        #expect(told.count == 1 && told.first?.event == "bye" && told.first?.string("reason") == "start failed")
        #expect(!late.isOpen)
        #expect(daemon.services.directory.count == 0 && daemon.services.registry.connectionCount == 0)
        try await daemon.stop()
    }

    @Test func theStoreOpensOnceWhoeverAsksFirst() async throws {
        let opens = NIOLockedValueBox(0)
        let store = OpeningAccountStore { () throws(AccountStoreError) in
            opens.withLockedValue { $0 += 1 }
            return InMemoryAccountStore()
        }
        let identity = try Usernames.identity(of: "erin").get()
        async let first = store.availability(of: identity)
        async let second = store.availability(of: identity)
        async let third = store.keptCollisions()
        let answers = try await (first, second, third)
        #expect(answers.0 == .available && answers.1 == .available && answers.2.isEmpty)
        #expect(opens.withLockedValue { $0 } == 1)
    }

    @Test func aFailedOpenFailsEveryCallAsTheOpenDid() async throws {
        let store = OpeningAccountStore { () throws(AccountStoreError) in throw .unavailable("cannot open /x/accounts.sqlite: disk I/O error") }
        await #expect(throws: AccountStoreError.unavailable("cannot open /x/accounts.sqlite: disk I/O error")) { try await store.opened() }
        let identity = try Usernames.identity(of: "erin").get()
        await #expect(throws: AccountStoreError.unavailable("cannot open /x/accounts.sqlite: disk I/O error")) { try await store.availability(of: identity) }
    }
}
