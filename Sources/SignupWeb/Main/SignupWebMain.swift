import SignupWebCore

/// The `signupd-web` executable: the bridge lives in SignupWebCore so that tests can use
/// every part of it in process.
@main
enum SignupWebMain {
    static func main() async {
        await SignupWebCommand.main()
    }
}
