import Protocol

/// A client's picture of one form session, kept up to date from the daemon's events.
struct SessionView {
    struct FieldState: Equatable {
        var state = "empty"
        var message = ""
    }

    struct Result: Equatable {
        var ok: Bool
        var message: String
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

    /// Applies a message if it concerns this session; returns whether anything changed.
    @discardableResult
    mutating func apply(_ message: JSONObject) -> Bool {
        guard let event = message["event"]?.stringValue else { return false }
        if let sessionID = message["session"]?.stringValue, !session.isEmpty, sessionID != session { return false }
        switch event {
        case "validation":
            guard let name = message["field"]?.stringValue else { return false }
            fields[name] = FieldState(state: message["state"]?.stringValue ?? "", message: message["message"]?.stringValue ?? "")
        case "enabled": enabled = message["value"]?.boolValue ?? false
        case "busy": busy = message["value"]?.boolValue ?? false
        case "result":
            result = Result(
                ok: message["ok"]?.boolValue ?? false, message: message["message"]?.stringValue ?? "",
                user: message["user"]?.stringValue, token: message["token"]?.stringValue
            )
        default:
            return false
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

extension FormDescription {
    /// Reads the forms out of a `description` event.
    static func list(from message: JSONObject) -> [FormDescription] {
        (message["forms"]?.arrayValue ?? []).compactMap { value in
            guard let object = value.objectValue, let name = object["name"]?.stringValue else { return nil }
            let fields = (object["fields"]?.arrayValue ?? []).compactMap { field -> FormDescription.Field? in
                guard let field = field.objectValue, let fieldName = field["name"]?.stringValue else { return nil }
                return FormDescription.Field(
                    name: fieldName, secret: field["secret"]?.boolValue ?? false, label: field["label"]?.stringValue ?? fieldName
                )
            }
            return FormDescription(name: name, fields: fields, submitLabel: object["submitLabel"]?.stringValue ?? "Submit")
        }
    }
}
