import NIOCore
import SignupProtocol
import Testing
@testable import SignupDaemonCore

/// The session's own deadlines run on the injected clock: an availability check that
/// never answers is given up exactly when virtual time passes the check timeout.
@Suite struct VirtualTimeTests {
    @Test func aStalledCheckFailsAtTheTimeoutOfVirtualTime() async throws {
        try await InProcessDaemon.withStalledStore(form: "signup") { daemon, client in
            try await client.send(#"{"op":"set","field":"username","value":"erin"}"#)
            let checking = try await client.sync().last { $0.string("field") == "username" }
            #expect(checking?.string("state") == "validating")

            // The default check timeout is 3 s: just before it, nothing; at it, the verdict.
            await daemon.advance(by: .milliseconds(2999))
            #expect(try await client.sync().isEmpty)
            await daemon.advance(by: .milliseconds(1))
            let verdict = try await client.sync()
            #expect(verdict.count == 1)
            #expect(verdict.first?.string("state") == "failed" && verdict.first?.string("message") == "Error contacting server")
        }
    }
}
