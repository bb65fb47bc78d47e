import ArgumentParser
import Protocol

extension SignupCtl {
    /// `signupctl monitor --session ID`
    struct Monitor: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Attach to a live session and print its events until it ends.",
            discussion: """
                Only the user who opened the session may attach to it; `signupctl sessions` lists \
                yours, and the form shows its id in its footer. With --json each event is one \
                envelope: {"ok":true,"command":"monitor","event":E,...the event's members}; the \
                envelope's "ok" says signupctl works, and an event's own "ok" (a result's \
                outcome) is carried as "eventOk": a failed login is \
                {"ok":true,...,"event":"result","eventOk":false,...}.
                """
        )

        @Option(help: ArgumentHelp("The session id (`signupctl sessions` lists yours).", valueName: "id"),
                completion: .custom { _, _, _ in
                    (try? Sessions.list(ConnectionOptions.fromEnvironment()))?.map(\.session) ?? []
                })
        var session: String

        @OptionGroup var connection: ConnectionOptions

        func run() throws {
            do throws(CommandFailure) {
                let daemon = try connection.connect()
                let id = try daemon.request(.attach(session: session))
                var attached = false
                while true {
                    // The attach answer comes within --timeout; then events come when they come.
                    guard let line = try attached ? daemon.receiveLineWithoutTimeout() : daemon.receiveLine() else {
                        throw CommandFailure(.protocolError, "signupd closed the connection", code: "disconnected")
                    }
                    guard let message = try? JSONParser.parse(line).objectValue else { continue }
                    let event = message["event"]?.stringValue ?? ""
                    if !attached, message["id"] == id.jsonValue {
                        if event == "error" { throw CommandFailure.fromError(message) }
                        attached = true
                    }
                    if connection.json {
                        var envelope = JSONEnvelope(command: "monitor")
                        envelope.members(of: message)
                        envelope.emit()
                    } else {
                        print(Self.describe(message))
                    }
                    fflushStdout()
                    if event == "closed" || event == "bye" { return }
                }
            } catch {
                Report.fail(error)
            }
        }

        static func describe(_ message: JSONObject) -> String {
            let event = message["event"]?.stringValue ?? "?"
            let seq = message["seq"].map { value -> String in
                if case .number(let n) = value { return "#\(n) " }
                return ""
            } ?? ""
            switch event {
            case "validation":
                let text = message["message"]?.stringValue ?? ""
                return "\(seq)\(message["field"]?.stringValue ?? "?"): \(message["state"]?.stringValue ?? "?")\(text.isEmpty ? "" : " — \(text)")"
            case "enabled", "busy":
                return "\(seq)\(event): \(message["value"]?.boolValue == true)"
            case "result":
                return "\(seq)result: \(message["ok"]?.boolValue == true ? "ok" : "failed") — \(message["message"]?.stringValue ?? "")"
            case "attached":
                return "attached to session \(message["session"]?.stringValue ?? "?") (\(message["form"]?.stringValue ?? "?"))"
            case "closed":
                return "session closed"
            case "bye":
                return "signupd said bye: \(message["reason"]?.stringValue ?? "")"
            default:
                return RawLine.text(of: message)
            }
        }
    }
}
