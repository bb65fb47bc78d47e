import Foundation
import NIOCore
import SignupProtocol
import Testing

@testable import SignupDaemonCore

/// `signups` through the daemon (issue 26): an administrator pauses sign-up, open signup
/// forms are told and refuse, logins go on, others may not pause; status and `sessions`
/// with `all` answer by who asks.
@Suite struct SignupPauseDaemonTests {
    @Test func rootPausesAndOpenFormsAreToldWhileLoginsGoOn() async throws {
        let daemon = try InProcessDaemon()
        let user = try await daemon.connect(uid: 1000)
        #expect(try await user.signUp("erin", "correct horse")["ok"] == .bool(true))
        let waiting = try await daemon.connect(uid: 1000)
        try await waiting.send(#"{"op":"open","form":"signup"}"#)
        _ = try await waiting.sync()

        let other = try await daemon.connect(uid: 4242)
        try await other.send(#"{"op":"signups","pause":true,"id":3}"#)
        let refused = try ServerEvent.decode(try await other.next())
        #expect(refused == .error(code: .forbidden, message: "pausing sign-up is for root and members of the administrators' group (--admin-group)", session: nil, id: .integer(3)))

        let root = try await daemon.connect(uid: 0)
        try await root.send(#"{"op":"signups","pause":true,"message":"back soon","id":4}"#)
        let paused = try await root.next("signups").match
        #expect(paused["paused"] == .bool(true) && paused["message"] == .string("back soon") && paused["byUid"] == .number("0"))
        let told = try await waiting.next("result").match
        #expect(told["ok"] == .bool(false) && told["messageId"] == .string("signup.paused_note") && told["message"] == .string("Sign-up is paused: back soon"))

        // A new form says so; its submit gets the same answer, never `not_ready`.
        let fresh = try await daemon.connect(uid: 1000)
        try await fresh.send(#"{"op":"open","form":"signup","locale":"zh-CN"}"#)
        #expect(try await fresh.next("result").match["message"] == .string("注册已暂停：back soon"))
        try await fresh.send(#"{"op":"submit","id":9}"#)
        let again = try await fresh.next("result").match
        #expect(again["messageId"] == .string("signup.paused_note") && again["id"] == .number("9"))

        // Logins are not paused.
        try await user.send(#"{"op":"open","form":"login"}"#)
        try await user.send(#"{"op":"set","field":"username","value":"erin"}"#)
        try await user.send(#"{"op":"set","field":"password","value":"correct horse"}"#)
        _ = try await user.sync()
        try await user.send(#"{"op":"submit"}"#)
        #expect(try await user.next("result").match["ok"] == .bool(true))

        let stored = try #require(try await daemon.services.accounts.store.signupPause())
        #expect(stored.note == "back soon" && stored.byUID == 0)
        #expect(daemon.services.metrics.registry.emitToString().contains("signupd_signups_paused 1"))

        try await root.send(#"{"op":"signups","pause":false,"id":5}"#)
        #expect(try await root.next("signups").match["paused"] == .bool(false))
        #expect(try await daemon.services.accounts.store.signupPause() == nil)
        try await daemon.stop()
    }

    @Test func statusAndAllSessionsAnswerByWhoAsks() async throws {
        let daemon = try InProcessDaemon()
        let user = try await daemon.connect(uid: 1000)
        try await user.send(#"{"op":"open","form":"signup"}"#)
        let session = try #require(try await user.next("opened").match.string("session"))
        try await user.send(#"{"op":"status","id":1}"#)
        let own = try await user.next("status").match
        #expect(own["scope"] == .string("own") && own["connections"] == nil && own["busiest"] == nil)
        #expect(own["own"]?.objectValue?["sessions"] == .number("1"))
        try await user.send(#"{"op":"sessions","all":true,"id":2}"#)
        #expect(try await user.next("error").match["code"] == .string("forbidden"))

        let root = try await daemon.connect(uid: 0)
        try await root.send(#"{"op":"status","id":3}"#)
        let all = try await root.next("status").match
        #expect(all["scope"] == .string("all") && all["sessions"] == .number("1") && all["connections"] == .number("2"))
        try await root.send(#"{"op":"sessions","all":true,"id":4}"#)
        let listed = try await root.next("sessions").match["sessions"]?.arrayValue?.compactMap(\.objectValue) ?? []
        #expect(listed.count == 1 && listed.first?["session"] == .string(session) && listed.first?["uid"] == .number("1000"))
        try await daemon.stop()
    }
}
