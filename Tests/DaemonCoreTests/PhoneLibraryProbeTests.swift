import CPhoneLibrary
import FormEngine
import Foundation
@testable import SignupDaemonCore
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The child process that tries libsignupd-phone.so before signupd opens it
/// (`signupd_phone_library_probe`): what it says when the library cannot be loaded, and that
/// `signupd --check-config` run by root can try it as signupd's user, who may not read what
/// root reads (helper-29).
@Suite("The phone library's trial load in a child process")
struct PhoneLibraryProbeTests {
    /// The built library, beside the test bundle.
    private static let built = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("libsignupd-phone.so").path

    /// A copy of the library with `mode`, in a fresh directory with `directoryMode`.
    private func copy(mode: mode_t, directoryMode: mode_t) throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("probe-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
        let path = "\(directory)/libsignupd-phone.so"
        try FileManager.default.copyItem(atPath: Self.built, toPath: path)
        #expect(chmod(path, mode) == 0 && chmod(directory, directoryMode) == 0)
        return path
    }

    private func probe(_ path: String, as user: (uid: uid_t, gid: gid_t)?, program: String = PhoneLibraryTrial.program) -> (Bool, String) {
        let (answer, why) = trialAnswer(path, as: user, program: program)
        return (answer == 1, why)
    }

    /// The probe's own answer: 1 usable, 0 the library's fault, -1 the trial did not happen.
    private func trialAnswer(_ path: String, as user: (uid: uid_t, gid: gid_t)?, program: String) -> (Int32, String) {
        var why = [CChar](repeating: 0, count: 4_608)
        let answer = signupd_phone_library_probe(path, program, user?.uid ?? uid_t.max, user?.gid ?? gid_t.max, &why, why.count)
        return (answer, String(decoding: why.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
    }

    @Test("a trial that cannot be started is not the library's fault: -1, tried again later, not 0 (helper-34: EAGAIN at TasksMax left numbers off)")
    func trialNotStarted() {
        let (answer, why) = trialAnswer(Self.built, as: nil, program: "/nonexistent/signupd")
        #expect(answer == -1, "\(why)")
        #expect(why.hasPrefix("cannot start /nonexistent/signupd to try \(Self.built) in: "), "\(why)")
        #expect(trialAnswer(Self.built, as: nil, program: PhoneLibraryTrial.program).0 == 1)
    }

    @Test("a library readable by its owner alone loads for root, and is refused, with dlopen's reason, for another user")
    func ownerOnly() throws {
        try #require(geteuid() == 0, "the suite runs as root, as CI does")
        let path = try copy(mode: 0o600, directoryMode: 0o755)
        #expect(probe(path, as: nil) == (true, ""))
        let nobody = (uid: uid_t(65534), gid: gid_t(65534))
        let (ok, why) = probe(path, as: nobody)
        #expect(!ok)
        #expect(why.hasPrefix("\(path): cannot open it: ") && why.contains("Permission denied") && why.hasSuffix("(tried as signupd's user)"), "\(why)")
    }

    @Test("a directory another user cannot enter is refused for that user")
    func directoryClosed() throws {
        try #require(geteuid() == 0)
        let path = try copy(mode: 0o644, directoryMode: 0o700)
        #expect(probe(path, as: nil).0)
        let (ok, why) = probe(path, as: (uid: 65534, gid: 65534))
        #expect(!ok && why.contains("Permission denied"), "\(why)")
    }

    @Test("an identity is only ever a whole E.164 number, whatever the library answered (helper-30: an empty one made every number tel:)", arguments: [
        ("+8613800138000", "+8613800138000"), ("+6831234", "+6831234"), ("", nil), ("+", nil), ("8613800138000", nil), ("+0613800138000", nil),
        ("+86 1380013800", nil), ("+861380013800012345", nil), ("+86138x0138000", nil),
    ])
    func e164Only(_ answered: String, _ identity: String?) {
        #expect(PhoneNumberRule.e164(Array(answered.utf8CString)) == identity)
    }

    @Test("a file that is no library: the child's dlopen reason, not a success left for later")
    func notALibrary() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("probe-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
        let path = "\(directory)/libsignupd-phone.so"
        try Data("not a library\n".utf8).write(to: URL(fileURLWithPath: path))
        let (ok, why) = probe(path, as: nil)
        #expect(!ok && why.hasPrefix("\(path): cannot open it: ") && !why.contains("tried as"), "\(why)")
    }
}
