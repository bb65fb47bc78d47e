import ArgumentParser

extension SignupCtl {
    /// `signupctl signup`
    struct Signup: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create an account.",
            discussion: """
                Interactive on a terminal. For scripts: \
                `printf '%s\\n' "$PASSWORD" | signupctl signup --username alice --password-stdin`
                """
        )

        @OptionGroup var inputs: FormInputOptions
        @OptionGroup var connection: ConnectionOptions

        func run() throws {
            try FormRun.run("signup", inputs: inputs, connection: connection, printToken: false)
        }
    }

    /// `signupctl login`
    struct Login: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Log in and print a session token.",
            discussion: """
                Interactive on a terminal. For scripts the token alone is printed on standard output: \
                `TOKEN=$(signupctl login --username alice --password-file ~/.pw)`
                """
        )

        @OptionGroup var inputs: FormInputOptions
        @OptionGroup var connection: ConnectionOptions

        func run() throws {
            try FormRun.run("login", inputs: inputs, connection: connection, printToken: true)
        }
    }
}

/// Picks the interactive or the scripted form, as the inputs say.
enum FormRun {
    static func run(_ form: String, inputs: FormInputOptions, connection: ConnectionOptions, printToken: Bool) throws {
        if inputs.interactive {
            try InteractiveForm.run(form: form, connection: connection)
        } else {
            try ScriptedForm.run(form: form, inputs: inputs, connection: connection, printToken: printToken)
        }
    }
}
