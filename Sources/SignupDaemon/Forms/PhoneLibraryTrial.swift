import CPhoneLibrary
import NIOConcurrencyHelpers

#if canImport(Glibc)
import Glibc
#endif

/// `signupd --phone-library-trial`: the child process in which `PhoneLibrary.check` first
/// loads libsignupd-phone.so (`signupd_phone_library_probe`). signupd runs itself for it, a
/// fresh program rather than a fork of a process whose threads may hold locks the library's
/// initialisers need; the tests in process run the `signupd` built beside them.
public enum PhoneLibraryTrial {
    static let flag = "--phone-library-trial"

    /// Called first by signupd's `main`: runs the trial and exits when that is what this
    /// process was started for; else notes that this process is signupd, whose own
    /// executable runs the trial.
    public static func runIfAsked() {
        let arguments = CommandLine.unsafeArgv
        if CommandLine.argc > 1, let first = arguments[1], strcmp(first, flag) == 0 {
            exit(signupd_phone_library_trial(CommandLine.argc, arguments))
        }
        isSignupd.withLockedValue { $0 = true }
    }

    /// The program the trial runs in: this executable when it is signupd, else the
    /// `signupd` beside it (a build directory: the test bundle's neighbour).
    static var program: String {
        if isSignupd.withLockedValue({ $0 }) { return "/proc/self/exe" }
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX))
        let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard length > 0 else { return "signupd" }
        let executable = String(decoding: buffer.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return executable.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/") + "/signupd"
    }

    private static let isSignupd = NIOLockedValueBox(false)
}
