import ArgumentParser

/// `signupctl`: the reference client of signupd.
@main
struct SignupCtl: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "signupctl",
        abstract: "Talk to signupd: fill in sign-up and login forms, script them, watch sessions.",
        discussion: """
            On a terminal, `signupctl signup` and `signupctl login` open a full-screen form that \
            signupd validates as you type. With --username (or when standard input is not a \
            terminal) they run non-interactively for scripts.

            Exit codes: 0 success; 1 the daemon said no (wrong password, name taken at submit, \
            invalid token); 2 the input is invalid (a field failed validation); 3 signupd cannot \
            be reached; 4 the conversation broke (timeout, unexpected reply); 64 bad usage.
            """,
        version: "0.1.0",
        subcommands: [Signup.self, Login.self, Describe.self, Ping.self, Verify.self, Monitor.self, Raw.self]
    )
}
