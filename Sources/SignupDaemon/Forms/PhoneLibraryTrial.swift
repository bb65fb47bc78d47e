import CPhoneLibrary
import NIOConcurrencyHelpers
import UnixIO

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
    /// `signupd` beside it (a build directory: the test bundle's neighbour). This one by its
    /// path while that is still the file running, so that `ps` and the journal call the trial
    /// signupd (helper-34: through /proc/self/exe it was "exe"); /proc/self/exe once an
    /// upgrade has replaced the file.
    static var program: String {
        let executable = UnixIO.readLink("/proc/self/exe")
        guard isSignupd.withLockedValue({ $0 }) else {
            guard let executable else { return "signupd" }
            return PrivateDirectory.parent(of: executable) + "/signupd"
        }
        var running = stat()
        var named = stat()
        if let executable, stat("/proc/self/exe", &running) == 0, stat(executable, &named) == 0,
            running.st_dev == named.st_dev, running.st_ino == named.st_ino
        {
            return executable
        }
        return "/proc/self/exe"
    }

    private static let isSignupd = NIOLockedValueBox(false)
}
