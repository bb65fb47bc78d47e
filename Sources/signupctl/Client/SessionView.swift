import SignupProtocol

/// A client's picture of one form session, kept up to date from the daemon's events.
struct SessionView {
    struct FieldState: Equatable {
        var state = "empty"
        var message = ""
        var messageId = ""
    }

    struct Result: Equatable {
        var ok: Bool
        var message: String
        var messageId = ""
        var user: String?
        var token: String?
    }

    let form: FormDescription
    var session = ""
    var fields: [String: FieldState] = [:]
    var enabled = false
    var busy = false
    var result: Result?

    init(form: FormDescription) {
        self.form = form
        for field in form.fields { fields[field.name] = FieldState() }
    }

    /// Applies an event if it concerns this session; returns whether anything changed.
    @discardableResult
    mutating func apply(_ event: ServerEvent?) -> Bool {
        // Other events, and those a newer daemon added, change nothing here.
        guard case .session(let sessionID, _, let event, _)? = event else { return false }
        if !session.isEmpty, sessionID != session { return false }
        switch event {
        case .validation(let field, let state, let message):
            fields[field] = FieldState(state: state.rawValue, message: message.text, messageId: message.id)
        case .enabled(let value): enabled = value
        case .busy(let value): busy = value
        case .result(let ok, let message, let user, let token):
            result = Result(ok: ok, message: message.text, messageId: message.id, user: user, token: token)
        }
        return true
    }

    /// Whether some field still waits for an availability answer.
    var validating: Bool { fields.values.contains { $0.state == "validating" } }

    /// The first field that is not ok, in form order, with why.
    var firstProblem: (field: FormDescription.Field, state: FieldState)? {
        for field in form.fields {
            let state = fields[field.name] ?? FieldState()
            if state.state != "ok" { return (field, state) }
        }
        return nil
    }
}
