import NIOCore
import SignupProtocol
import Testing
@testable import SignupDaemonCore

/// A session left alone past `--session-idle-timeout` (900 s by default) ends, and every
/// connection holding it hears `closed` with the reason; a request keeps it alive. On the
/// daemon's injected clock: virtual time.
@Suite struct SessionIdleTests {
    @Test func aSessionLeftAloneEndsWithItsReasonAndARequestKeepsItAlive() async throws {
        let daemon = try InProcessDaemon()
        let owner = try await daemon.connect()
        try await owner.send(#"{"op":"open","form":"signup","id":"o"}"#)
        let session = try #require(try await owner.next("opened").match.string("session"))
        let viewer = try await daemon.connect()
        try await viewer.send(#"{"op":"attach","session":"\#(session)","id":"a"}"#)
        _ = try await viewer.next("attached")
        _ = try await owner.sync()
        _ = try await viewer.sync()

        // A keystroke at 600 s: the 900 s count again from it.
        await daemon.advance(by: .seconds(600))
        try await owner.send(#"{"op":"set","field":"username","value":"idle"}"#)
        _ = try await owner.sync()
        await daemon.advance(by: .seconds(899))
        #expect(try await owner.sync().allSatisfy { $0.event != "closed" }, "899 s after the last request it is still open")
        try await viewer.send(#"{"op":"snapshot","id":"s"}"#)
        #expect(try await viewer.sync().contains { $0.event == "validation" }, "and answers")

        // 900 s after the viewer's snapshot, both hear why it ended.
        await daemon.advance(by: .seconds(900))
        for client in [owner, viewer] {
            let closed = try await client.next("closed").match
            #expect(closed.string("session") == session && closed.string("reason") == "idle: no request for 900 seconds", "\(closed)")
        }
        // Its requests now say it has ended; the connection itself lives on.
        try await owner.send(#"{"op":"set","field":"username","value":"late","id":"late"}"#)
        let refused = try await owner.next("error").match
        #expect(refused.string("code") == "unknown_session" || refused.string("code") == "no_session", "\(refused)")
        try await owner.send(#"{"op":"ping","id":"p"}"#)
        #expect(try await owner.next("pong").match.string("id") == "p")
        try await daemon.stop()
    }
}

/// A signup or login being worked on is no abandoned form: however long the store takes,
/// the session waits for its result instead of timing out.
@Suite struct BusySessionIdleTests {
    @Test func aSessionWaitingForItsSubmitIsNotIdle() async throws {
        try await InProcessDaemon.withStalledStore(form: "login") { daemon, client in
            try await client.send(#"{"op":"set","field":"username","value":"slowpoke"}"#)
            try await client.send(#"{"op":"set","field":"password","value":"secret password"}"#)
            _ = try await client.sync()
            try await client.send(#"{"op":"submit","id":"go"}"#)
            let started = try await client.sync()
            #expect(started.contains { $0.event == "busy" && $0["value"] == .bool(true) }, "\(started)")
            await daemon.advance(by: .seconds(3600))
            #expect(try await client.sync().allSatisfy { $0.event != "closed" }, "an hour of a stalled store: still waiting, not closed")
        }
    }
}
