import NIOCore
import NIOEmbedded
import SignupProtocol
import Testing
@testable import SignupDaemonCore

/// Replies leave in request order; `ping` is a barrier, also for requests answered on
/// another event loop (a session opened by a connection on another loop).
@Suite struct ConnectionOrderingTests {
    @Test func repliesComeInRequestOrderAndPongLast() async throws {
        let daemon = try InProcessDaemon()
        let client = try await daemon.connect()
        try await client.sendRaw(
            #"{"op":"ping","id":1}"# + "\n" + #"{"op":"open","form":"login","id":2}"# + "\n"
                + #"{"op":"set","field":"password","value":"secret","id":3}"# + "\n" + #"{"op":"ping","id":4}"# + "\n"
        )
        let events = try await client.written()
        let names = events.map(\.event)
        #expect(names == ["pong", "opened", "validation", "validation", "enabled", "busy", "validation", "pong"])
        let ids: [String] = events.map { $0["id"].flatMap { if case .number(let n) = $0 { n } else { nil } } ?? "-" }
        #expect(ids == ["1", "2", "2", "2", "2", "2", "3", "4"])
        #expect(events[6].string("field") == "password" && events[6].string("state") == "ok")
        try await daemon.stop()
    }

    @Test func pingWaitsForAnAnswerFromAnotherEventLoop() async throws {
        let daemon = try InProcessDaemon()
        let opener = try await daemon.connect()
        try await opener.send(#"{"op":"open","form":"login"}"#)
        let session = try #require(try await opener.next("opened").match.string("session"))

        // A second connection on its own loop: its requests on the session run on the opener's.
        let otherLoop = NIOAsyncTestingEventLoop()
        let channel = NIOAsyncTestingChannel(loop: otherLoop)
        let context = daemon.context
        try await otherLoop.executeInContext { try channel.pipeline.syncOperations.addHandler(ConnectionHandler(context: context, peer: PeerCredentials(pid: 1, uid: 1000, gid: 1000))) }
        try await channel.connect(to: SocketAddress(unixDomainSocketPath: "/other.sock")).get()
        let viewer = TestClient(channel: channel, loop: otherLoop)
        #expect(try await viewer.next().event == "hello")

        try await viewer.sendRaw(
            #"{"op":"attach","session":"\#(session)","id":"a"}"# + "\n" + #"{"op":"snapshot","id":"s"}"# + "\n" + #"{"op":"ping","id":"p"}"# + "\n"
        )
        var ids: [String] = []
        while ids.last != "p" {
            let event = try await viewer.next()
            ids.append(event.string("id") ?? "-")
        }
        // attached + 4 snapshot events for "a", 4 for "s", then the pong: nothing overtakes.
        #expect(ids == ["a", "a", "a", "a", "a", "s", "s", "s", "s", "p"])
        try await daemon.stop()
    }
}
