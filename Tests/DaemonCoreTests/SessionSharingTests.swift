import Protocol
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

    @Test func theOpenersCloseEndsTheSessionForEveryone() async throws {
        let daemon = try InProcessDaemon()
        let opener = try await daemon.connect()
        let viewer = try await daemon.connect()
        try await opener.send(#"{"op":"open","form":"login"}"#)
        let session = try #require(try await opener.next("opened").match.string("session"))
        try await viewer.send(#"{"op":"attach","session":"\#(session)"}"#)
        _ = try await viewer.sync()

        try await opener.disconnect()
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
}
