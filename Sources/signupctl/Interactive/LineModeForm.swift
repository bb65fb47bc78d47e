import SignupClient
import SignupProtocol
import UnixIO

#if canImport(Glibc)
import Glibc
#endif

/// The form for terminals without cursor addressing (`TERM=dumb`, no terminfo entry):
/// plain prompts, one field at a time, each validated by the daemon before the next.
enum LineModeForm {
    static func run(client: FormClient, tty: Int32) -> InteractiveForm.Outcome {
        let fields = client.view.form.fields
        let say = { (text: String) in _ = UnixIO.writeAll(tty, Array((text + "\n").utf8)) }
        let text = ScreenText.forLocale(client.locale)
        say(text.lineModeHeader(client.view.form.submitLabel, client.connection.info.server, client.view.session))
        do throws(CommandFailure) {
            // The snapshot follows `opened`: read it before the first prompt.
            try client.settle()
            while true {
                // Sign-up paused: said before anything is asked, and the form ends refused.
                if let paused = client.view.paused {
                    say("  ✗ \(paused.message)")
                    return .failed(CommandFailure(.refused, paused.message, code: "refused", messageId: paused.messageId))
                }
                var index = 0
                while index < fields.count {
                    let field = fields[index]
                    guard case .text(let value) = PasswordPrompt.read(Say.labelled(field.label, ""), fd: tty, secret: field.secret) else { return .cancelled }
                    try client.set(field.name, value)
                    try client.settle()
                    while client.view.fields[field.name]?.state == .validating { try client.pump() }
                    let state = client.view.fields[field.name] ?? SessionView.FieldState()
                    if state.state == .ok {
                        index += 1
                    } else {
                        say("  ✗ \(state.state == .empty ? text.required(field.label) : state.message)")
                        // signupd cannot decide now (phone numbers cannot be checked): typing
                        // again cannot help; the form ends as a scripted one would, 75.
                        if CommandFailure.unavailableMessageIds.contains(state.messageId) {
                            return .failed(CommandFailure(.unavailable, state.message, messageId: state.messageId))
                        }
                        // What was typed ahead was meant for the fields after this one — a
                        // password manager's auto-type puts the password next — and must not
                        // land, echoed, in this field's prompt again (helper-31): dropped, as
                        // login(1) drops it after a failed attempt.
                        tcflush(tty, TCIFLUSH)
                        // A repeat that no longer matches sends the user back to it, not further.
                    }
                }
                // Fields checked together (a repeated password) may have changed since.
                if let problem = client.view.firstProblem {
                    say("  ✗ \(problem.validation.message.isEmpty ? text.required(problem.field.label) : problem.validation.message)")
                    continue
                }
                while !client.view.enabled, client.view.validating { try client.pump() }
                let id = try client.submit()
                while client.view.result == nil {
                    let received = try client.pump()
                    if received.id == id, let refusal = received.refusal {
                        say("  ✗ \(Say.pick(refusal.message, Say.refusal(refusal.code.rawValue)))")
                        break
                    }
                }
                if let result = client.view.result {
                    if result.ok { return .finished(result) }
                    say("  ✗ \(result.message)")
                }
            }
        } catch {
            return .failed(error)
        }
    }
}
