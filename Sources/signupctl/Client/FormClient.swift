import SignupClient
import SignupProtocol

extension BlockingSignupForm where Failure == CommandFailure {
    /// Opens the form named `formName` on `connection`, reading its description from the
    /// daemon; `action` is the command's (`signup`, `login`): a form that does the other is
    /// refused. Field lists come from the daemon's `describe`, never from here.
    convenience init(connection: DaemonConnection, formName: String, action: String) throws(CommandFailure) {
        let described = try connection.reply(to: try connection.request(.describe(locale: UserLocale.current)))
        guard case .description(let forms, _, _) = described.event else { throw .unexpected(described, answering: "describe") }
        guard let form = forms.first(where: { $0.name == formName }) else {
            let offered = forms.map(\.name).joined(separator: ", ")
            throw CommandFailure(.usage, Say.pick(
                "signupd does not offer a \(formName) form; it offers: \(offered)",
                "服务没有 \(formName) 表单；可用的表单：\(forms.map { "`\($0.name)`" }.joined(separator: "、"))"), code: "usage")
        }
        if let formAction = form.action, formAction != action {
            throw CommandFailure(.usage, Say.pick(
                "the \(formName) form is for \(formAction), not \(action): use `signupctl \(formAction) --form \(formName)`",
                "表单 \(formName) 用于\(formAction == "login" ? "登录" : "注册")：请用 `signupctl \(formAction) --form \(formName)`"), code: "usage")
        }
        try self.init(connection: connection, form: form, locale: UserLocale.current, failure: CommandFailure.init)
    }

    /// The session's state (signupctl's name for it).
    var view: SessionView { state }

    /// The locale the daemon resolved for the session, nil if it named none.
    var locale: String? { state.locale }

    /// The scripted flow: fill every field, wait for validation, submit, wait for the result.
    func fillAndSubmit(values: [String: String]) throws(CommandFailure) -> FormResult {
        for field in state.form.fields {
            try set(field.name, values[field.name] ?? "")
        }
        try settle()
        while true {
            switch state.readiness {
            case .ready:
                try submit()
                while state.result == nil {
                    if let refusal = try pump().refusal { throw CommandFailure(refusal) }
                }
                return state.result!
            case .blocked(let field, let validation):
                // "password — Password too short": lower case mid-sentence in English only
                // (a German label is a noun, written with its capital: helper-49).
                let label = (locale ?? "en").lowercased().hasPrefix("en") ? field.label.lowercased() : field.label
                let reason = validation.state == .empty
                    ? Say.pick("\(label) is required", "请填写\(label)") : Say.pick("\(label) — \(validation.message)", validation.message)
                if CommandFailure.unavailableMessageIds.contains(validation.messageId) {
                    throw CommandFailure(.unavailable, reason, messageId: validation.messageId)
                }
                throw CommandFailure(.invalidInput, reason, messageId: validation.messageId.isEmpty ? nil : validation.messageId)
            case .refused(let result):
                // Sign-up paused: the daemon's answer, as a refused submit's would be.
                return result
            case .waiting:
                try pump()
            }
        }
    }
}
