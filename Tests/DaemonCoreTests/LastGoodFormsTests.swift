import FormEngine
import Foundation
import Testing
@testable import SignupDaemonCore

#if canImport(Glibc)
import Glibc
#endif

/// The last good form configuration (issue 27): kept exactly, read back exactly, and a
/// damaged copy is never served.
@Suite final class LastGoodFormsTests {
    /// The directories a test made, removed after it: run outside the test command's own
    /// /tmp, they were left behind (and a test command running meanwhile counted them).
    private var made: [String] = []

    deinit {
        for directory in made { try? FileManager.default.removeItem(atPath: directory) }
    }

    private func scratch() -> String {
        let base = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        var template = Array("\(base)/signupd-lastgood-XXXXXX".utf8CString)
        let result = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        precondition(result != nil)
        let directory = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        made.append(directory)
        return directory
    }

    private let sources = FormSources(
        forms: [
            .init(path: "/etc/signupd/forms.d/a b.form", text: "[form]\nname = a\n# 注释, \"quoted\" and a trailing newline\n\n"),
            .init(path: "/etc/signupd/forms.d/empty.form", text: ""),
        ],
        messages: [.init(path: "/etc/signupd/messages.d/fr.messages", text: "login.done = Connecté")]
    )

    @Test func savedFilesReadBackExactlyAndPrivately() throws {
        let directory = scratch()
        let store = LastGoodForms(path: directory + "/" + LastGoodForms.fileName)
        #expect(store.load().failureValue == LastGoodFormsError.none)
        try store.save(sources, now: 1000)
        let saved = try #require(store.load().successValue)
        #expect(saved.sources == sources)
        #expect(saved.savedAt == 1000)
        var info = stat()
        #expect(stat(store.path, &info) == 0 && info.st_mode & 0o777 == 0o600)
    }

    @Test func theSameFilesKeepTheirTimeAndOthersReplaceThem() throws {
        let store = LastGoodForms(path: scratch() + "/forms.last-good")
        try store.save(sources, now: 1000)
        try store.save(sources, now: 2000)
        #expect(store.load().successValue?.savedAt == 1000)
        var changed = sources
        changed.forms[0].text += "label = A\n"
        try store.save(changed, now: 3000)
        #expect(store.load().successValue?.savedAt == 3000)
        #expect(store.load().successValue?.sources == changed)
    }

    enum Damage: String, CaseIterable, Sendable {
        case cut, lengthPastTheEnd, otherHeader, notUTF8

        func apply(_ bytes: inout [UInt8]) {
            switch self {
            case .cut: bytes.removeLast(5)
            case .lengthPastTheEnd:
                // The last file's length, whatever it is, becomes 999.
                var text = String(decoding: bytes, as: UTF8.self)
                let entry = text.range(of: "\nmessages ")!
                let digits = text[entry.upperBound...].prefix { $0.isNumber }
                text.replaceSubrange(entry.upperBound..<digits.endIndex, with: "999")
                bytes = Array(text.utf8)
            case .otherHeader: bytes[0] = UInt8(ascii: "x")
            case .notUTF8: bytes[bytes.count - 3] = 0xFF
            }
        }
    }

    @Test(arguments: Damage.allCases)
    func aDamagedCopyIsRefused(damage: Damage) throws {
        let store = LastGoodForms(path: scratch() + "/forms.last-good")
        try store.save(sources, now: 1000)
        let fd = open(store.path, O_RDWR)
        var info = stat()
        fstat(fd, &info)
        var bytes = [UInt8](repeating: 0, count: Int(info.st_size))
        _ = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        let before = bytes
        damage.apply(&bytes)
        #expect(bytes != before)
        ftruncate(fd, 0)
        _ = bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        close(fd)
        #expect(store.load().failureValue == .unreadable(store.path, "damaged"))
    }
}

extension Result {
    fileprivate var successValue: Success? { if case .success(let value) = self { value } else { nil } }
    fileprivate var failureValue: Failure? { if case .failure(let error) = self { error } else { nil } }
}
