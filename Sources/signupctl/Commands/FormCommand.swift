import ArgumentParser
import Protocol

#if canImport(Glibc)
import Glibc
#endif

/// How a form command gets its input: flags, or the interactive terminal form.
struct FormInputOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The username (scripted mode).", valueName: "name"))
    var username: String?

    @Flag(help: "Read the password from the first line of standard input.")
    var passwordStdin = false

    @Option(help: ArgumentHelp("Read the password from the first line of this file.", valueName: "path"))
    var passwordFile: String?

    @Flag(help: "Never open the interactive form, even on a terminal.")
    var noInteractive = false

    func validate() throws {
        if passwordStdin && passwordFile != nil { throw ValidationError("use either --password-stdin or --password-file") }
    }

    /// Interactive when standard input and output are terminals and nothing was given by flag.
    var interactive: Bool {
        !noInteractive && username == nil && !passwordStdin && passwordFile == nil && isatty(0) == 1 && isatty(1) == 1
    }

    /// The password from where the flags say, or standard input when it is not a terminal.
    func password() throws(CommandFailure) -> String {
        if let passwordFile {
            let fd = open(passwordFile, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else {
                throw CommandFailure(.invalidInput, "cannot read --password-file \(passwordFile): \(errnoText())")
            }
            defer { close(fd) }
            return Self.firstLine(of: fd)
        }
        if passwordStdin || isatty(0) == 0 { return Self.firstLine(of: 0) }
        return PasswordPrompt.read("Password: ")
    }

    /// Reads up to the first newline, byte by byte, so nothing after it is consumed.
    private static func firstLine(of fd: Int32) -> String {
        var bytes: [UInt8] = []
        var byte: UInt8 = 0
        while true {
            let count = read(fd, &byte, 1)
            if count < 0 && errno == EINTR { continue }
            if count <= 0 || byte == 0x0A { break }
            bytes.append(byte)
        }
        if bytes.last == 0x0D { bytes.removeLast() }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// Runs a form in scripted mode and prints its result.
enum ScriptedForm {
    static func run(form: String, inputs: FormInputOptions, connection options: ConnectionOptions, printToken: Bool) throws {
        do throws(CommandFailure) {
            guard let username = inputs.username else {
                throw CommandFailure(.invalidInput, "--username is required when not on a terminal")
            }
            let password = try inputs.password()
            let client = try FormClient(connection: try options.connect(), formName: form)
            var values: [String: String] = [:]
            for field in client.view.form.fields {
                values[field.name] = field.secret ? password : username
            }
            let result = try client.fillAndSubmit(values: values)
            if options.json {
                print(ResultJSON.encode(result, session: client.view.session))
            } else if result.ok {
                print(printToken ? (result.token ?? "") : "\(result.message): \(result.user ?? username)")
            }
            guard result.ok else { throw CommandFailure(.refused, result.message) }
        } catch {
            Report.fail(error)
        }
    }
}

/// JSON output of a result.
enum ResultJSON {
    static func encode(_ result: SessionView.Result, session: String) -> String {
        var writer = JSONWriter()
        writer.beginObject()
        writer.member("ok", result.ok)
        writer.member("message", result.message)
        writer.member("session", session)
        if let user = result.user { writer.member("user", user) }
        if let token = result.token { writer.member("token", token) }
        writer.endObject()
        return String(decoding: writer.bytes, as: UTF8.self)
    }
}

/// One-line failure reports on stderr, then the documented exit status.
enum Report {
    static func fail(_ failure: CommandFailure) -> Never {
        var line = "signupctl: \(failure.description)\n"
        line.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
        exit(failure.status.rawValue)
    }
}
