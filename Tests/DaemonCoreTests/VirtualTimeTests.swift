import Dispatch
import NIOCore
import Protocol
import Testing
import UsernameIdentity
@testable import SignupDaemonCore

/// The session's own deadlines run on the injected clock: an availability check that
/// never answers is given up exactly when virtual time passes the check timeout.
@Suite struct VirtualTimeTests {
    /// A store whose availability answer waits until the test opens the gate.
    final class StalledStore: AccountStore {
        let gate = DispatchSemaphore(value: 0)
        private var failure: AccountStoreError { .unavailable("not used by this test") }
        func availability(of identity: UsernameIdentity) throws(AccountStoreError) -> NameAvailability {
            gate.wait()
            return .available
        }
        func createAccount(_ identity: UsernameIdentity, passwordHash: String, createdAt: Int64) throws(AccountStoreError) -> NameAvailability { throw failure }
        func account(for identity: UsernameIdentity) throws(AccountStoreError) -> StoredAccount? { throw failure }
        func updatePasswordHash(accountID: Int64, passwordHash: String) throws(AccountStoreError) { throw failure }
        func storeToken(hash: [UInt8], accountID: Int64, expiresAt: Int64) throws(AccountStoreError) { throw failure }
        func tokenOwner(hash: [UInt8], now: Int64) throws(AccountStoreError) -> String? { throw failure }
        func deleteExpiredTokens(now: Int64) throws(AccountStoreError) -> Int { throw failure }
        func keptCollisions() throws(AccountStoreError) -> [KeptCollision] { [] }
    }

    @Test func aStalledCheckFailsAtTheTimeoutOfVirtualTime() async throws {
        let store = StalledStore()
        let daemon = try InProcessDaemon(store: .custom(store))
        let client = try await daemon.connect()
        try await client.send(#"{"op":"open","form":"signup"}"#)
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

        store.gate.signal()  // the cancelled read may end now; its answer is ignored
        try await daemon.stop()
    }
}
