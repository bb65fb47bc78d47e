import SignupProtocol

/// Opens a form session and drives it: the piece both the scripted and the interactive
/// commands share. Field lists come from the daemon's `describe`, never from here.
final class FormClient {
    let connection: DaemonConnection
    private(set) var view: SessionView
    /// The locale the daemon resolved for the session (`opened`'s `locale`), nil if it named none.
    private(set) var locale: String?

    /// Connects the form named `formName`, reading its description from the daemon;
    /// `action` is the command's (`signup`, `login`): a form that does the other is refused.
    init(connection: DaemonConnection, formName: String, action: String) throws(CommandFailure) {
        self.connection = connection
        let described = try connection.reply(to: try connection.request(.describe(locale: UserLocale.current)))
        guard case .description(let forms, _, _)? = described.event else { throw .unexpected(described, answering: "describe") }
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
        view = SessionView(form: form)
        let openID = try connection.request(.open(form: formName, locale: UserLocale.current))
        var snapshot: [Received] = []
        let reply = try connection.reply(to: openID) { received throws(CommandFailure) in snapshot.append(received) }
        guard case .opened(let session, _, let locale, _, _)? = reply.event else { throw .unexpected(reply, answering: "open") }
        view.session = session
        self.locale = locale
        for received in snapshot { view.apply(received.event) }
    }

    /// Sends a field's new value.
    func set(_ field: String, _ value: String) throws(CommandFailure) {
        try connection.send(Request(.set(session: view.session, field: field, value: value)))
    }

    /// Asks to submit; returns the request's id, which a refusal (`not_ready`) carries.
    @discardableResult
    func submit() throws(CommandFailure) -> RequestID {
        view.result = nil  // a new attempt: the last result no longer stands
        return try connection.request(.submit(session: view.session))
    }

    /// Reads one message and applies it; returns it.
    @discardableResult
    func pump() throws(CommandFailure) -> Received {
        let received = try connection.receive()
        try apply(received)
        return received
    }

    /// Waits until everything sent so far has been processed (ping round trip).
    func settle() throws(CommandFailure) {
        let id = try connection.request(.ping)
        _ = try connection.reply(to: id) { received throws(CommandFailure) in try apply(received) }
    }

    /// Applies an event to the view; the daemon ending the form itself (left alone past
    /// `--session-idle-timeout`) ends the command, saying why.
    private func apply(_ received: Received) throws(CommandFailure) {
        if case .closed(let session, let reason?, _)? = received.event, session == view.session {
            throw CommandFailure.formClosed(reason)
        }
        view.apply(received.event)
    }

    /// The scripted flow: fill every field, wait for validation, submit, wait for the result.
    func fillAndSubmit(values: [String: String]) throws(CommandFailure) -> SessionView.Result {
        for field in view.form.fields {
            try set(field.name, values[field.name] ?? "")
        }
        try settle()
        while !view.enabled {
            if !view.validating, let problem = view.firstProblem {
                let label = problem.field.label.lowercased()
                let reason = problem.state.state == "empty"
                    ? Say.pick("\(label) is required", "请填写\(label)") : Say.pick("\(label) — \(problem.state.message)", problem.state.message)
                if CommandFailure.unavailableMessageIds.contains(problem.state.messageId) {
                    throw CommandFailure(.unavailable, reason, messageId: problem.state.messageId)
                }
                throw CommandFailure(.invalidInput, reason, messageId: problem.state.messageId.isEmpty ? nil : problem.state.messageId)
            }
            try pump()
        }
        try submit()
        while view.result == nil {
            if let refusal = try pump().refusal { throw CommandFailure(refusal) }
        }
        return view.result!
    }
}
