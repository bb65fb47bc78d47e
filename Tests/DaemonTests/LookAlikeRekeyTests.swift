import Foundation
import GRDB
import SignupProtocol
import Testing

/// A database whose keys predate the look-alike table (issue 27: bㅣll and bill were two
/// accounts) is re-keyed at the next start: both accounts are kept and log in, the pair is
/// reported once, and no new name may join it.
@Suite("Re-keying accounts that the look-alike table makes collide")
struct LookAlikeRekeyTests {
    /// The key version the release before the table stored (with Debian 12's ICU; any
    /// version other than today's re-keys alike).
    static let previousVersion = "NFKC_Casefold+UTS39-similarity/Unicode-15.0+tel-E.164"

    @Test("bill and bㅣll, both stored before the table: kept, reported, each logs in, a third look-alike is refused")
    func rekeysAndReports() throws {
        let daemon = DaemonProcess()
        try daemon.start()
        let client = try daemon.connect()
        _ = try client.hello()
        #expect(try client.signup("bill", "bill password")["ok"] == .bool(true))
        #expect(try client.signup("bxll", "second password")["ok"] == .bool(true))
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit() == 0)

        // As the previous release stored them: bㅣll was free then.
        let queue = try DatabaseQueue(path: daemon.databasePath)
        try queue.write { db in
            try db.execute(sql: "UPDATE account SET username = ? WHERE username = 'bxll'", arguments: ["b\u{3163}ll"])
            try db.execute(sql: "UPDATE identityKeyVersion SET version = ?", arguments: [Self.previousVersion])
        }
        try queue.close()

        let again = DaemonProcess(directory: daemon.directory)
        try again.start()
        let after = try again.connect()
        _ = try after.hello()
        #expect(again.log.contains("collide") && again.log.contains("\"bill\"") && again.log.contains("b\u{3163}ll"), "the pair is reported: \(again.log)")
        let first = try after.login("bill", "bill password")
        #expect(first["ok"] == .bool(true) && first.string("user") == "bill")
        let second = try after.login("b\u{3163}ll", "second password")
        #expect(second["ok"] == .bool(true) && second.string("user") == "b\u{3163}ll", "\(second)")
        let third = try again.connect()
        _ = try third.hello()
        #expect(try third.signupVerdict("b\u{4E28}ll").string("message") == IdentityPair.similar)
        again.signal(SIGTERM)
        #expect(again.waitForExit() == 0)

        let (version, colliding) = try DatabaseQueue(path: daemon.databasePath).read { db in
            (try String.fetchOne(db, sql: "SELECT version FROM identityKeyVersion"),
             try Int.fetchOne(db, sql: "SELECT count(*) FROM account WHERE collidesWith IS NOT NULL"))
        }
        #expect(version?.hasPrefix("NFKC_Casefold+UTS39-similarity+look-alikes-") == true)
        #expect(version?.hasSuffix("+tel-E.164") == true)
        #expect(colliding == 1, "the later account is marked, the first owns the keys")
    }
}
