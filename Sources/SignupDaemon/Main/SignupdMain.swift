import SignupDaemonCore

/// The `signupd` executable: the command lives in SignupDaemonCore, with the rest of the
/// daemon, so that tests can use every part of it in process.
@main
enum SignupdMain {
    static func main() async {
        MainStarted.mark()
        // signupd runs itself to try the phone library in a child process before opening it.
        PhoneLibraryTrial.runIfAsked()
        await SignupDaemonCommand.main()
    }
}
