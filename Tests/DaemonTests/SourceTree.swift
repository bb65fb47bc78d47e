import Foundation

/// A file of the checkout the tests read (PROTOCOL.md, the schema, fixtures), under the
/// directory `swift test` runs in when that is the package, else where this file was
/// compiled: scripts/test.sh runs the tests from a view of the checkout, where the compiled-in
/// path (a clone under /tmp, say) may be out of reach.
enum SourceTree {
    static let root: URL = {
        let here = FileManager.default.currentDirectoryPath
        let isPackage = ["Package.swift", "PROTOCOL.md"].allSatisfy { FileManager.default.fileExists(atPath: "\(here)/\($0)") }
        return isPackage ? URL(fileURLWithPath: here) : URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }()
}
