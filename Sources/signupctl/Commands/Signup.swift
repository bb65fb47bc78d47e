import ArgumentParser

extension SignupCtl {
    /// `signupctl signup`
    struct Signup: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create an account.",
            discussion: """
                Interactive on a terminal. With --username alone it asks for the password twice \
                on the terminal. For scripts: \
                `printf '%s\\n' "$PASSWORD" | signupctl signup --username alice --password-stdin`. \
                JSON: {"ok":true,"command":"signup","message":M,"session":S,"user":U}
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
                `TOKEN=$(signupctl login --username alice --password-file ~/.pw)`. The interactive \
                form draws on /dev/tty, so `TOKEN=$(signupctl login)` works too. \
                JSON: {"ok":true,"command":"login","message":M,"session":S,"user":U,"token":T}
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
    static func run(_ command: String, inputs: FormInputOptions, connection: ConnectionOptions, printToken: Bool) throws {
        let form = inputs.form ?? command
        guard inputs.interactive, let tty = Terminal.open() else {
            return try ScriptedForm.run(form: form, inputs: inputs, connection: connection, printToken: printToken)
        }
        let client: FormClient
        do {
            client = try FormClient(connection: try connection.connect(), formName: form, action: printToken ? "login" : "signup")
        } catch {
            Report.fail(error)
        }
        let outcome = Terminal.canAddressCursor ? InteractiveForm.run(client: client, tty: tty) : LineModeForm.run(client: client, tty: tty)
        // Done with the form, whatever the outcome: the session ends now, not after the
        // daemon's resume grace (the reports below exit the process).
        client.end()
        switch outcome {
        case .finished(let result):
            FormOutput.print(result, form: form, session: client.view.session, json: connection.json, printToken: printToken, tty: tty)
        case .cancelled:
            Report.fail(CommandFailure(.cancelled, Say.pick("cancelled", "已取消"), code: "cancelled"))
        case .failed(let failure):
            Report.fail(failure)
        }
    }
}
