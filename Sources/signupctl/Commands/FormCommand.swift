import ArgumentParser
import SignupClient
import SignupProtocol
import UnixIO

#if canImport(Glibc)
import Glibc
#endif

/// How a form command gets its input: flags, or the interactive terminal form.
struct FormInputOptions: ParsableArguments {
    @Option(help: ArgumentHelp(
        "Open this form instead of the command's own (an operator's form, e.g. email-signup; `signupctl describe` lists them). Its fields come from the daemon.",
        valueName: "name"))
    var form: String?

    @Option(help: ArgumentHelp("The username, phone number or e-mail address: the form's identity field (scripted mode).", valueName: "name"))
    var username: String?

    @Option(name: .customLong("field"), help: ArgumentHelp(
        "Another field of the form, as NAME=VALUE (scripted mode; repeatable), e.g. --field nickname=Ann.",
        valueName: "name=value"))
    var fields: [String] = []

    @Flag(help: "Read the password from the first line of standard input.")
    var passwordStdin = false

    @Option(help: ArgumentHelp("Read the password from the first line of this file.", valueName: "path"), completion: .file())
    var passwordFile: String?

    @Flag(help: "Never open the interactive form, even on a terminal.")
    var noInteractive = false

    func validate() throws {
        if passwordStdin && passwordFile != nil { throw ValidationError(Say.pick("use either --password-stdin or --password-file", "--password-stdin 与 --password-file 只能用其一")) }
        if let username, username.isEmpty { throw ValidationError(Say.pick("--username needs a name", "--username 需要一个名字")) }
        if let form, form.isEmpty { throw ValidationError(Say.pick("--form needs a form name", "--form 需要一个表单名")) }
    }

    /// Interactive when standard input is a terminal and nothing was given by flag; the
    /// form itself draws on /dev/tty, so standard output may be a pipe.
    var interactive: Bool {
        !noInteractive && username == nil && !passwordStdin && passwordFile == nil && isatty(0) == 1
    }

    /// The value of every secret field, from where the flags say, standard input when it
    /// is not a terminal, or else one prompt per secret field on the terminal (so a
    /// signup asks for the password and then for its repetition).
    func secrets(for fields: [FormDescription.Field]) throws(CommandFailure) -> [String: String] {
        let secret = fields.filter(\.secret)
        if let passwordFile {
            let fd = open(passwordFile, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else {
                throw CommandFailure(.usage, Say.pick("cannot read --password-file \(passwordFile): \(UnixIO.errnoText())", "无法读取 --password-file \(passwordFile)：\(UnixIO.errnoText())"), code: "usage")
            }
            defer { close(fd) }
            var info = stat()
            if fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFDIR {
                throw CommandFailure(.usage, Say.pick("cannot read --password-file \(passwordFile): it is a directory", "无法读取 --password-file \(passwordFile)：它是一个目录"), code: "usage")
            }
            let password = Self.firstLine(of: fd) ?? ""
            return Dictionary(uniqueKeysWithValues: secret.map { ($0.name, password) })
        }
        if passwordStdin || isatty(0) == 0 {
            guard let password = Self.firstLine(of: 0) else {
                throw CommandFailure(.usage, Say.pick(
                    "no password on standard input (it ended at once): pipe one in with --password-stdin, or use --password-file",
                    "标准输入中没有密码（输入立即结束）：请用 --password-stdin 通过管道传入，或使用 --password-file"), code: "usage")
            }
            return Dictionary(uniqueKeysWithValues: secret.map { ($0.name, password) })
        }
        guard let tty = Terminal.open() else {
            throw CommandFailure(.usage, Say.pick("no terminal to ask for the password on: use --password-stdin or --password-file", "没有可用于输入密码的终端：请使用 --password-stdin 或 --password-file"), code: "usage")
        }
        defer { close(tty) }
        var values: [String: String] = [:]
        for field in secret {
            guard case .text(let value) = PasswordPrompt.read(Say.labelled(field.label, ""), fd: tty, secret: true) else {
                throw CommandFailure(.cancelled, Say.pick("cancelled", "已取消"), code: "cancelled")
            }
            values[field.name] = value
        }
        return values
    }

    /// Reads up to the first newline, byte by byte, so nothing after it is consumed;
    /// nil when the input ended before anything (not even a newline) was read.
    static func firstLine(of fd: Int32) -> String? {
        var bytes: [UInt8] = []
        var byte: UInt8 = 0
        var sawNewline = false
        while true {
            let count = read(fd, &byte, 1)
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { break }
            if byte == 0x0A { sawNewline = true; break }
            bytes.append(byte)
        }
        if bytes.isEmpty && !sawNewline { return nil }
        if bytes.last == 0x0D { bytes.removeLast() }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// Runs a form in scripted mode and prints its result.
enum ScriptedForm {
    static func run(form: String, inputs: FormInputOptions, connection options: ConnectionOptions, printToken: Bool) throws {
        do throws(CommandFailure) {
            guard let username = inputs.username else {
                throw CommandFailure(.usage, Say.pick(
                    "--username is required when standard input is not a terminal (or with --no-interactive)",
                    "标准输入不是终端（或使用了 --no-interactive）时必须给出 --username"), code: "usage")
            }
            let client = try FormClient(connection: try options.connect(), formName: form, action: printToken ? "login" : "signup")
            let fields = client.view.form.fields
            var values = try inputs.secrets(for: fields)
            // --username is the identity field's value (username, phone or e-mail), else the
            // first field that is not secret; any other field comes from --field NAME=VALUE.
            let identity = fields.first { ["username", "phone", "email"].contains($0.kind ?? "") } ?? fields.first { !$0.secret }
            if let identity { values[identity.name] = username }
            for assignment in inputs.fields {
                guard let equals = assignment.firstIndex(of: "="), !assignment[..<equals].isEmpty else {
                    throw CommandFailure(.usage, Say.pick("--field \(assignment): write it as NAME=VALUE", "--field \(assignment)：请写成 字段名=值"), code: "usage")
                }
                let name = String(assignment[..<equals])
                guard let field = fields.first(where: { $0.name == name }), !field.secret else {
                    let names = fields.filter { !$0.secret }.map(\.name).joined(separator: ", ")
                    throw CommandFailure(.usage, Say.pick(
                        "--field \(name): the \(form) form has no such field (its fields: \(names); secrets come from --password-stdin or --password-file)",
                        "--field \(name)：表单 \(form) 没有这个字段（可用的字段：\(fields.filter { !$0.secret }.map { "`\($0.name)`" }.joined(separator: "、"))；密码来自 --password-stdin 或 --password-file）"), code: "usage")
                }
                values[field.name] = String(assignment[assignment.index(after: equals)...])
            }
            let result = try client.fillAndSubmit(values: values)
            guard result.ok else {
                if CommandFailure.unavailableMessageIds.contains(result.messageId) {
                    throw CommandFailure(.unavailable, result.message, messageId: result.messageId)
                }
                throw CommandFailure(.refused, result.message, code: "refused", messageId: result.messageId.isEmpty ? nil : result.messageId)
            }
            FormOutput.print(result, form: form, session: client.view.session, json: options.json, printToken: printToken, tty: nil)
        } catch {
            Report.fail(error)
        }
    }
}

/// Prints a successful result: the JSON envelope; or the token alone (login) or
/// "Signed up: NAME" (signup) on standard output, with the human message also on the
/// terminal when standard output is not one.
enum FormOutput {
    static func print(_ result: FormResult, form: String, session: String, json: Bool, printToken: Bool, tty: Int32?) {
        let summary = Say.labelled(result.message, Say.shown(user: result.user ?? ""))
        if json {
            // The command, as a failure's envelope names it: `signup --form phone-signup` is
            // still `signup` (helper-28).
            var envelope = JSONEnvelope(command: Report.command)
            envelope.member("message", result.message)
            envelope.member("session", session)
            if let user = result.user { envelope.member("user", user) }
            if let token = result.token { envelope.member("token", token) }
            envelope.emit()
            return
        }
        if let tty, isatty(1) == 0 { UnixIO.writeAll(tty, Array((summary + "\n").utf8)) }
        if printToken, let token = result.token {
            if tty != nil && isatty(1) == 1 { Swift.print(summary) }
            Swift.print(token)
        } else {
            Swift.print(summary)
        }
    }
}
