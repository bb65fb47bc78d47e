import NIOCore
import Testing
@testable import SignupDaemonCore

/// A closed session is freed at once (issues 27, 29): a flood of sessions whose name checks
/// wait for their uid's budget kept every one of them, values and all, until the budget's
/// debt reached it — minutes after the flood ended, and growing with each flood.
@Suite struct SessionReleaseTests {
    @Test(.timeLimit(.minutes(1))) func aSessionWaitingForTheCheckBudgetIsFreedWhenItCloses() async throws {
        let daemon = try InProcessDaemon { tuning in
            tuning.availabilityChecksPerUIDPerSecond = 1
        }
        let client = try await daemon.connect(uid: 1000)
        try await client.send(#"{"op":"open","form":"signup"}"#)
        // The burst (two) is answered; the third check waits for the clock.
        for name in ["name0", "name1"] {
            try await client.send(#"{"op":"set","field":"username","value":"\#(name)"}"#)
            while try await client.next("validation").match.string("state") != "ok" {}
        }
        try await client.send(#"{"op":"set","field":"username","value":"name2"}"#)
        let seen = try await client.sync()
        #expect(seen.contains { $0.string("field") == "username" && $0.string("state") == "validating" })
        #expect(!seen.contains { $0.string("field") == "username" && $0.string("state") == "ok" })
        weak let session = daemon.services.directory.all.first
        #expect(session != nil)

        try await client.send(#"{"op":"close"}"#)
        _ = try await client.sync()
        // No time passes: nothing but the cancelled turn could still hold it.
        #expect(daemon.services.directory.count == 0)
        #expect(session == nil)
        try await daemon.stop()
    }
}
