import Dispatch
import NIOCore
import NIOEmbedded
import NIOPosix
import SignupProtocol
import Testing
@testable import SignupDaemonCore

/// `attach` and `close`: who sees what, and what ends a session.
@Suite struct SessionSharingTests {
    @Test func anAttachedConnectionSeesChangesAndDetachesAlone() async throws {
        let daemon = try InProcessDaemon()
        let opener = try await daemon.connect()
        let viewer = try await daemon.connect()
        try await opener.send(#"{"op":"open","form":"login"}"#)
        let session = try #require(try await opener.next("opened").match.string("session"))
        _ = try await opener.sync()

        try await viewer.send(#"{"op":"attach","session":"\#(session)","id":1}"#)
        let attached = try await viewer.sync()
        #expect(attached.map(\.event) == ["attached", "validation", "validation", "enabled", "busy"])

        // Holding it already is an error; so is nothing.
        try await viewer.send(#"{"op":"attach","session":"\#(session)","id":2}"#)
        #expect(try await viewer.sync().first?.string("code") == "session_open")

        try await opener.send(#"{"op":"set","field":"username","value":"alice","id":9}"#)
        let own = try await opener.sync()
        #expect(own.first?.string("field") == "username" && own.first?["id"] == .number("9"))
        let seen = try await viewer.sync()
        #expect(seen.first?.string("field") == "username" && seen.first?["id"] == nil)

        try await viewer.send(#"{"op":"close"}"#)
        #expect(try await viewer.sync().map(\.event) == ["closed"])
        try await opener.send(#"{"op":"set","field":"username","value":""}"#)
        #expect(try await opener.sync().first?.string("field") == "username")
        #expect(try await viewer.written().isEmpty)
        try await daemon.stop()
    }

    /// Every change of a session is written to each connection attached: their number is
    /// capped (`--max-views-per-session`), so one request cannot cost thousands of writes
    /// outside its uid's share. A view that leaves makes room.
    @Test func viewsPerSessionAreCappedAndAViewLeavingMakesRoom() async throws {
        let daemon = try InProcessDaemon { $0.maxViewsPerSession = 3 }
        let opener = try await daemon.connect()
        try await opener.send(#"{"op":"open","form":"login"}"#)
        let session = try #require(try await opener.next("opened").match.string("session"))
        _ = try await opener.sync()
        var views: [TestClient] = []
        for _ in 0..<3 {
            let view = try await daemon.connect()
            try await view.send(#"{"op":"attach","session":"\#(session)"}"#)
            #expect(try await view.sync().first?.event == "attached")
            views.append(view)
        }
        let fourth = try await daemon.connect()
        try await fourth.send(#"{"op":"attach","session":"\#(session)","id":"a"}"#)
        let refused = try #require(try await fourth.sync().first)
        #expect(refused.event == "error" && refused.string("code") == "limit_exceeded" && refused["id"] == .string("a"))
        #expect(refused.string("message") == "session \(session) has 3 connections attached already, the most one session may have (--max-views-per-session)")
        // The refused connection holds nothing: the opener's change reaches the three views only.
        try await opener.send(#"{"op":"set","field":"username","value":"alice"}"#)
        _ = try await opener.sync()
        for view in views { #expect(try await view.sync().first?.string("field") == "username") }
        #expect(try await fourth.written().isEmpty)
        try await views[0].send(#"{"op":"close"}"#)
        _ = try await views[0].sync()
        try await fourth.send(#"{"op":"attach","session":"\#(session)"}"#)
        #expect(try await fourth.sync().first?.event == "attached")
        try await daemon.stop()
    }

    /// A login session opened on one connection and attached from another.
    private func openedAndAttached() async throws -> (InProcessDaemon, opener: TestClient, viewer: TestClient, session: String) {
        let daemon = try InProcessDaemon()
        let opener = try await daemon.connect()
        let viewer = try await daemon.connect()
        try await opener.send(#"{"op":"open","form":"login"}"#)
        let session = try #require(try await opener.next("opened").match.string("session"))
        try await viewer.send(#"{"op":"attach","session":"\#(session)"}"#)
        _ = try await viewer.sync()
        return (daemon, opener, viewer, session)
    }

    /// The opener's connection drops: the session waits for `resume` (viewers stay), and
    /// ends for them when the grace passes with nobody resuming it.
    @Test func theOpenersDropLeavesTheSessionToResumeThenEndsIt() async throws {
        let (daemon, opener, viewer, _) = try await openedAndAttached()
        try await opener.disconnect()
        #expect(try await viewer.written().isEmpty)
        try await viewer.send(#"{"op":"set","field":"username","value":"bob"}"#)
        #expect(try await viewer.sync().first?.string("field") == "username")
        await daemon.advance(by: .seconds(60))
        let told = try await viewer.written()
        #expect(told.map(\.event) == ["closed"] && told.first?.string("reason") == "abandoned: its connection dropped and nobody resumed it within 60 seconds")
        #expect(daemon.services.directory.count == 0)
        try await daemon.stop()
    }

    @Test func theOpenersCloseEndsTheSessionForEveryone() async throws {
        let (daemon, opener, viewer, session) = try await openedAndAttached()

        try await opener.send(#"{"op":"close"}"#)
        _ = try await opener.sync()
        let told = try await viewer.written()
        #expect(told.map(\.event) == ["closed"])
        #expect(told.first?.string("session") == session)
        try await viewer.send(#"{"op":"snapshot","id":1}"#)
        let error = try #require(try await viewer.sync().first)
        #expect(error.string("code") == "no_session")
        try await viewer.send(#"{"op":"attach","session":"\#(session)","id":2}"#)
        #expect(try await viewer.sync().first?.string("code") == "unknown_session")
        #expect(daemon.services.directory.count == 0)
        try await daemon.stop()
    }

    /// Membership is one `SessionHold` both sides keep: when the session ends, the viewer
    /// knows at once. A request naming it hears that it ended; the default falls back to
    /// the latest session still held; the ended one no longer counts against the limit.
    @Test func aSessionThatEndedLeavesTheViewersOtherSessionsAndRoomForMore() async throws {
        let daemon = try InProcessDaemon(limits: ServerLimits(maxLineBytes: 65536, maxSessionsPerConnection: 2, maxOutputBytes: 1 << 20))
        let opener = try await daemon.connect()
        let viewer = try await daemon.connect()
        try await viewer.send(#"{"op":"open","form":"signup"}"#)
        let own = try #require(try await viewer.next("opened").match.string("session"))
        _ = try await viewer.sync()
        try await opener.send(#"{"op":"open","form":"login"}"#)
        let shared = try #require(try await opener.next("opened").match.string("session"))
        _ = try await opener.sync()
        try await viewer.send(#"{"op":"attach","session":"\#(shared)"}"#)
        _ = try await viewer.sync()
        // At the limit of 2.
        try await viewer.send(#"{"op":"open","form":"login","id":1}"#)
        #expect(try await viewer.sync().first?.string("code") == "limit_exceeded")

        try await opener.send(#"{"op":"close","id":2}"#)
        #expect(try await opener.sync().map(\.event) == ["closed"])
        #expect(try await viewer.written().map(\.event) == ["closed"])

        try await viewer.send(#"{"op":"set","session":"\#(shared)","field":"username","value":"a","id":3}"#)
        let ended = try #require(try await viewer.sync().first)
        #expect(ended.string("code") == "unknown_session")
        #expect(ended.string("message") == "session \(shared) has ended")

        // Named again, or attached again: the same words, not "not held" or "no session".
        try await viewer.send(#"{"op":"snapshot","session":"\#(shared)","id":"again"}"#)
        #expect(try await viewer.sync().first?.string("message") == "session \(shared) has ended")
        try await viewer.send(#"{"op":"attach","session":"\#(shared)","id":"reattach"}"#)
        #expect(try await viewer.sync().first?.string("message") == "session \(shared) has ended")

        try await viewer.send(#"{"op":"set","field":"username","value":"alice","id":4}"#)
        let fallback = try #require(try await viewer.sync().first)
        #expect(fallback.event == "validation" && fallback.string("session") == own)

        try await viewer.send(#"{"op":"open","form":"login","id":5}"#)
        let reopened = try await viewer.sync()
        #expect(reopened.map(\.event).contains("opened") && !reopened.map(\.event).contains("error"), "\(reopened)")
        try await daemon.stop()
    }

    /// An attached connection on another event loop learns the end from `closed`, never
    /// from a refusal first: its hold ends on its own loop, right after `closed` is queued
    /// there. Its loop is held busy here, so the order is seen, not raced.
    @Test func aViewersHoldEndsOnlyAfterItsClosedEvent() async throws {
        let daemon = try InProcessDaemon()
        let opener = try await daemon.connect()
        try await opener.send(#"{"op":"open","form":"login"}"#)
        let id = try #require(try await opener.next("opened").match.string("session"))
        let session = try #require(daemon.services.directory.find(id))

        // The viewer: a real channel on a loop of its own, its client end in `fds[1]`.
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        var fds: [Int32] = [0, 0]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0)
        let channel = try await NIOPipeBootstrap(group: group).takingOwnershipOfDescriptor(inputOutput: fds[0]).get()
        let viewer = ConnectionOutput(channel: channel, peer: PeerCredentials(pid: 1, uid: 1000, gid: 1000))
        let hold = SessionHold(session, viewer, isOwner: false)
        try await daemon.loop.executeInContext { session.subscribe(hold) }

        let busy = DispatchSemaphore(value: 0)
        channel.eventLoop.execute { busy.wait() }
        try await daemon.loop.executeInContext { session.close() }
        #expect(!hold.hasEnded, "ended before the viewer's loop delivered closed")
        busy.signal()
        try await channel.eventLoop.submit {}.get()
        #expect(hold.hasEnded)
        var bytes = [UInt8](repeating: 0, count: 4096)
        let count = read(fds[1], &bytes, bytes.count)
        #expect(String(decoding: bytes.prefix(max(0, count)), as: UTF8.self).contains(#""event":"closed""#))

        try await channel.close()
        close(fds[1])
        try await group.shutdownGracefully()
        try await daemon.stop()
    }
}
