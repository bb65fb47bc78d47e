import ArgumentParser
import SignupClient
import SignupProtocol

extension SignupCtl {
    /// `signupctl describe`
    struct Describe: FailingCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show the forms signupd serves and their fields.",
            discussion: "JSON: {\"ok\":true,\"command\":\"describe\",\"server\":S,\"protocol\":P,\"socket\":PATH,\"forms\":[{\"name\",\"submitLabel\",\"fields\":[{\"name\",\"secret\",\"label\"}]}]}"
        )

        @OptionGroup var connection: ConnectionOptions

        func body() throws(CommandFailure) {
            let daemon = try connection.connect()
            let reply = try daemon.reply(to: try daemon.request(.describe(locale: UserLocale.current)))
            if connection.json {
                var envelope = JSONEnvelope(command: "describe")
                envelope.member("server", daemon.info.server)
                envelope.member("protocol", daemon.info.protocolName)
                envelope.member("socket", daemon.path)
                // The daemon's words as it sent them: a newer daemon's members too.
                envelope.member("forms", json: reply.members["forms"] ?? .array([]))
                envelope.emit()
                return
            }
            print(Say.pick("\(daemon.info.server) (\(daemon.info.protocolName)) at \(daemon.path)", "服务 \(daemon.path)"))
            guard case .description(let forms, _, _) = reply.event else { throw .unexpected(reply, answering: "describe") }
            for form in forms {
                print("\n\(form.name)  [\(form.submitLabel)]")
                for field in form.fields {
                    print("  \(field.name.padding(18))\(field.label)\(field.secret ? Say.pick("  (secret)", "（密文）") : "")")
                }
            }
        }
    }

    /// `signupctl ping`
    struct Ping: FailingCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check that signupd answers, and how fast.",
            discussion: "JSON: {\"ok\":true,\"command\":\"ping\",\"server\":S,\"socket\":PATH,\"connectMicroseconds\":N,\"roundTripMicroseconds\":N}"
        )

        @OptionGroup var connection: ConnectionOptions

        func body() throws(CommandFailure) {
            let start = ContinuousClock.now
            let daemon = try connection.connect()
            let connected = ContinuousClock.now
            _ = try daemon.reply(to: try daemon.request(.ping))
            let end = ContinuousClock.now
            if connection.json {
                var envelope = JSONEnvelope(command: "ping")
                envelope.member("server", daemon.info.server)
                envelope.member("socket", daemon.path)
                envelope.member("connectMicroseconds", Int((connected - start) / .microseconds(1)))
                envelope.member("roundTripMicroseconds", Int((end - connected) / .microseconds(1)))
                envelope.emit()
            } else {
                let (roundTrip, connect) = (Int((end - connected) / .microseconds(1)), Int((connected - start) / .microseconds(1)))
                print(Say.pick(
                    "\(daemon.info.server) at \(daemon.path): pong in \(roundTrip) µs (connect + hello \(connect) µs)",
                    "服务 \(daemon.path) 已应答：往返 \(roundTrip) 微秒（连接与问候 \(connect) 微秒）"))
            }
        }
    }

    /// `signupctl verify [TOKEN | -]`
    struct Verify: FailingCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check a login token and print whose it is.",
            discussion: """
                The token is read from the first line of standard input when it is not \
                given or given as "-", as in `printf '%s\\n' "$TOKEN" | signupctl verify`: \
                an argument is visible to every local user in /proc/PID/cmdline. A token \
                given as an argument may begin with "-": pass it after "--". Exit 1 (code \
                invalid_token) for an unknown, malformed or expired token; exit 64 when \
                standard input has no token. JSON: {"ok":true,"command":"verify","user":U}
                """
        )

        @Argument(help: "The token `signupctl login` printed, or - (the default) to read it from standard input.")
        var token: String?

        @OptionGroup var connection: ConnectionOptions

        func body() throws(CommandFailure) {
            let token = try TokenInput.read(self.token, command: "verify")
            let daemon = try connection.connect()
            let reply = try daemon.reply(to: try daemon.request(.verify(token: token)))
            guard case .verified(let user, _) = reply.event else { throw .unexpected(reply, answering: "verify") }
            if connection.json {
                var envelope = JSONEnvelope(command: "verify")
                envelope.member("user", user)
                envelope.emit()
            } else {
                print(user)
            }
        }
    }
}

extension String {
    func padding(_ width: Int) -> String {
        count >= width ? self + " " : self + String(repeating: " ", count: width - count)
    }
}

/// Re-encodes a parsed message as one JSON line (the protocol's writer).
enum RawLine {
    static func text(of object: JSONObject) -> String {
        text(of: .object(object))
    }

    static func text(of value: JSONValue) -> String {
        var writer = JSONWriter()
        writer.value(value)
        return String(decoding: writer.bytes, as: UTF8.self)
    }
}
