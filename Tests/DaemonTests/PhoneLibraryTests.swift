import Foundation
import SignupProtocol
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// libphonenumber in a library of signupd's own, `libsignupd-phone.so`, found at start and
/// opened after it (issue 29, the cold start): where signupd looks for it, and what a start
/// without it, or with a damaged one, does. Each case runs a copy of the real binary laid out
/// as an install would lay it out.
@Suite("The phone-number library, found beside signupd and opened after start")
struct PhoneLibraryTests {
    private static let library = URL(fileURLWithPath: DaemonProcess.binary).deletingLastPathComponent().appendingPathComponent("libsignupd-phone.so").path

    /// `signupd` copied to `directory/sbin`, and `library` (if any) to `at` under `directory`.
    private func install(in directory: String, library: Data?, at relative: String) throws -> String {
        let manager = FileManager.default
        try manager.createDirectory(atPath: "\(directory)/sbin", withIntermediateDirectories: true)
        try manager.copyItem(atPath: DaemonProcess.binary, toPath: "\(directory)/sbin/signupd")
        if let library {
            let path = "\(directory)/\(relative)"
            try manager.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try library.write(to: URL(fileURLWithPath: path))
        }
        return "\(directory)/sbin/signupd"
    }

    /// The phone field's validation states after typing `number` in a fresh phone-signup session.
    private func phoneStates(_ daemon: DaemonProcess, _ number: String) throws -> [String] {
        let client = try daemon.connect()
        _ = try client.hello()
        _ = try client.open("phone-signup")
        return try client.set("phone", number)
            .filter { $0.string("event") == "validation" && $0.string("field") == "phone" }
            .map { "\($0.string("state") ?? "") \($0.string("messageId") ?? "")" }
    }

    @Test("without the library beside it or in ../lib/signupd, the start is refused, naming both places")
    func missing() throws {
        let directory = DaemonProcess.makeDirectory()
        let program = try install(in: directory, library: nil, at: "")
        let daemon = DaemonProcess(directory: directory)
        try daemon.start(.byHand, waitForReady: false, program: program)
        #expect(daemon.waitForExit() == 1)
        #expect(daemon.log.contains("cannot start: libsignupd-phone.so is neither in \(directory)/sbin nor in \(directory)/sbin/../lib/signupd"), "\(daemon.log)")
        #expect(!FileManager.default.fileExists(atPath: daemon.databasePath), "refused before the store is opened")
    }

    @Test("installed in ../lib/signupd beside the binary (/usr/sbin and /usr/lib/signupd), numbers are checked")
    func installedLayout() throws {
        let directory = DaemonProcess.makeDirectory()
        let program = try install(in: directory, library: try Data(contentsOf: URL(fileURLWithPath: Self.library)), at: "lib/signupd/libsignupd-phone.so")
        let daemon = DaemonProcess(directory: directory)
        try daemon.start(.systemd, program: program)
        #expect(try phoneStates(daemon, "138001380") == ["failed phone.too_short"])
        // A valid number goes on to the availability check, as libphonenumber judged it.
        #expect(try phoneStates(daemon, "138 0013 8000").first == "validating phone.checking")
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit() == 0)
        #expect(!daemon.log.contains("phone numbers cannot be checked"))
    }

    @Test("a library that cannot be opened: the start goes on, every number is refused, and signupd keeps serving")
    func damaged() throws {
        let directory = DaemonProcess.makeDirectory()
        let program = try install(in: directory, library: Data("not a shared object\n".utf8), at: "sbin/libsignupd-phone.so")
        let daemon = DaemonProcess(directory: directory)
        try daemon.start(.systemd, program: program)
        let states = try phoneStates(daemon, "13800138000")
        #expect(states == ["failed phone.impossible"], "\(states)")
        #expect(try phoneStates(daemon, "+86 138 0013 8000") == ["failed phone.impossible"], "the daemon is still there for the next session")
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit() == 0)
    }
}
