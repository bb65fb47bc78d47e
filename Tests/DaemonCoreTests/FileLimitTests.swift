import Testing
@testable import SignupDaemonCore

/// Connection limits fitted into the open-file limit.
@Suite struct FileLimitTests {
    @Test func limitsPastTheDescriptorsAreLoweredKeepingTheShare() {
        let fitted = FileLimit.fitted(maxConnections: 16384, maxConnectionsPerUID: 1024, openFiles: 1024)
        #expect(fitted.total == 1024 - FileLimit.reserved)
        #expect(fitted.perUID == 56)  // 1/16 of 896
        let roomy = FileLimit.fitted(maxConnections: 16384, maxConnectionsPerUID: 1024, openFiles: 1 << 20)
        #expect(roomy.total == 16384 && roomy.perUID == 1024)
        #expect(FileLimit.fitted(maxConnections: 100, maxConnectionsPerUID: 100, openFiles: 20) == (total: 1, perUID: 1))
    }
}
