import ArgumentParser
import Protocol

extension SignupCtl {
    /// `signupctl describe`
    struct Describe: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show the forms signupd serves and their fields.")

        @OptionGroup var connection: ConnectionOptions

        func run() throws {
            do {
                let daemon = try connection.connect()
                let reply = try daemon.reply(to: try daemon.request(.describe))
                if connection.json {
                    print(RawLine.text(of: reply))
                    return
                }
                print("\(daemon.hello["server"]?.stringValue ?? "signupd") (\(daemon.hello["protocol"]?.stringValue ?? "?")) at \(daemon.path)")
                for form in FormDescription.list(from: reply) {
                    print("\n\(form.name)  [\(form.submitLabel)]")
                    for field in form.fields {
                        print("  \(field.name.padding(18))\(field.label)\(field.secret ? "  (secret)" : "")")
                    }
                }
            } catch {
                Report.fail(error)
            }
        }
    }

    /// `signupctl ping`
    struct Ping: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Check that signupd answers, and how fast.")

        @OptionGroup var connection: ConnectionOptions

        func run() throws {
            do {
                let start = ContinuousClock.now
                let daemon = try connection.connect()
                let connected = ContinuousClock.now
                _ = try daemon.reply(to: try daemon.request(.ping))
                let end = ContinuousClock.now
                let server = daemon.hello["server"]?.stringValue ?? "signupd"
                if connection.json {
                    var writer = JSONWriter()
                    writer.beginObject()
                    writer.member("server", server)
                    writer.member("socket", daemon.path)
                    writer.member("connectMicroseconds", Int((connected - start) / .microseconds(1)))
                    writer.member("roundTripMicroseconds", Int((end - connected) / .microseconds(1)))
                    writer.endObject()
                    print(String(decoding: writer.bytes, as: UTF8.self))
                } else {
                    print("\(server) at \(daemon.path): pong in \(Int((end - connected) / .microseconds(1))) µs (connect + hello \(Int((connected - start) / .microseconds(1))) µs)")
                }
            } catch {
                Report.fail(error)
            }
        }
    }

    /// `signupctl verify TOKEN`
    struct Verify: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check a login token and print whose it is.",
            discussion: "Tokens are base64url and may begin with \"-\": pass them after \"--\", as in `signupctl verify -- \"$TOKEN\"`."
        )

        @Argument(help: "The token `signupctl login` printed.")
        var token: String

        @OptionGroup var connection: ConnectionOptions

        func run() throws {
            do {
                let daemon = try connection.connect()
                let reply = try daemon.reply(to: try daemon.request(.verify(token: token)))
                let user = reply["user"]?.stringValue ?? ""
                print(connection.json ? RawLine.text(of: reply) : user)
            } catch {
                Report.fail(error)
            }
        }
    }
}

extension String {
    func padding(_ width: Int) -> String {
        count >= width ? self + " " : self + String(repeating: " ", count: width - count)
    }
}

/// Re-encodes a parsed message as one JSON line.
enum RawLine {
    static func text(of object: JSONObject) -> String {
        var out = ""
        write(.object(object), into: &out)
        return out
    }

    private static func write(_ value: JSONValue, into out: inout String) {
        switch value {
        case .null: out += "null"
        case .bool(let b): out += b ? "true" : "false"
        case .number(let n): out += n
        case .string(let s): out += quoted(s)
        case .array(let items):
            out += "["
            for (index, item) in items.enumerated() {
                if index > 0 { out += "," }
                write(item, into: &out)
            }
            out += "]"
        case .object(let object):
            out += "{"
            for (index, member) in object.members.enumerated() {
                if index > 0 { out += "," }
                out += quoted(member.key) + ":"
                write(member.value, into: &out)
            }
            out += "}"
        }
    }

    private static func quoted(_ s: String) -> String {
        var writer = JSONWriter()
        writer.beginObject()
        writer.member("", s)
        writer.endObject()
        // {"":"…"} → "…"
        return String(decoding: writer.bytes.dropFirst(4).dropLast(), as: UTF8.self)
    }
}
