import Testing
@testable import SignupDaemonCore

/// `journalctl -u signupd` shows MESSAGE only: a warning's reason, kept in its metadata,
/// must be in the message too, in a stable order.
@Suite struct JournalMessageTests {
    @Test func theMetadataFollowsTheMessageAsKeyValuePairs() {
        #expect(JournalLogHandler.message("availability service unreachable", ["cause=no answer within 3 s", "service=https://users.test"])
            == "availability service unreachable (cause=no answer within 3 s, service=https://users.test)")
        #expect(JournalLogHandler.message("serving", []) == "serving")
    }
}
