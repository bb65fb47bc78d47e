import ArgumentParser
import SignupClient
import SignupProtocol

extension SignupCtl {
    /// `signupctl monitor --session ID`
    struct Monitor: FailingCommand {
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

        func body() throws(CommandFailure) {
            let daemon = try connection.connect()
            let id = try daemon.request(.attach(session: session))
            var attached = false
            while true {
                // The attach answer comes within --timeout; then events come when they come.
                guard let received = try daemon.nextMessage(waitingForever: attached) else {
                    throw CommandFailure(.protocolError, Say.pick("signupd closed the connection", "服务关闭了连接"), code: "disconnected")
                }
                if !attached, received.id == id {
                    if let refusal = received.refusal { throw CommandFailure(refusal) }
                    attached = true
                }
                if connection.json {
                    var envelope = JSONEnvelope(command: "monitor")
                    envelope.members(of: received.members)
                    envelope.emit()
                } else {
                    print(Self.describe(received))
                }
                fflushStdout()
                switch received.event {
                case .closed, .bye: return
                default: break
                }
            }
        }

        /// One line for an event; an event this signupctl cannot read as a `ServerEvent`, or
        /// one a monitor does not name, as its raw line.
        static func describe(_ received: Received) -> String {
            switch received.event {
            case .session(_, let seq, let change, _):
                switch change {
                case .validation(let field, let state, let text):
                    return "#\(seq) \(field): \(state.rawValue)\(text.text.isEmpty ? "" : " — \(text.text)")"
                case .enabled(let value):
                    return "#\(seq) enabled: \(value)"
                case .busy(let value):
                    return "#\(seq) busy: \(value)"
                case .result(let ok, let text, _, _):
                    return "#\(seq) result: \(ok ? "ok" : "failed") — \(text.text)"
                }
            case .attached(let session, let form, _, _):
                return "attached to session \(session) (\(form))"
            case .closed(_, let reason, _):
                return reason.map { "session closed: \($0)" } ?? "session closed"
            case .bye(let reason):
                return "signupd said bye: \(reason)"
            default:
                return RawLine.text(of: received.members)
            }
        }
    }
}
