import Foundation
import Testing
@testable import SignupDaemonCore

/// The start reports kept collisions; at 1,000,000 accounts reading them by a scan of every
/// similarity key took 87-102 ms of each start (issue 29's cold start). The v4 index keeps
/// the query to the kept rows.
@Suite struct KeptCollisionsPlanTests {
    @Test func keptCollisionsAreReadFromTheirIndexNotAScan() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kept-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try SQLiteAccountStore(path: directory + "/accounts.sqlite")
        let plan = try await store.keptCollisionsPlan()
        // Reading the kept index whole is reading the kept rows: few.
        #expect(plan.contains { $0.contains("USING INDEX similarityKey_kept") }, "\(plan)")
        #expect(!plan.contains { $0.hasPrefix("SCAN similarityKey") && !$0.contains("similarityKey_kept") }, "\(plan)")
    }
}
