/// What the interactive form shows, as a pure function of its state: one line per field,
/// its validation under it, the submit button, and the result or a spinner. Fits 80×24.
struct FormScreen {
    var view: SessionView
    var values: [String: String] = [:]
    var focus = 0
    var spinnerFrame = 0
    var color: Bool
    var server = "signupd"
    /// A notice from the daemon or the client (an error, "press any key").
    var notice: String?

    static let spinner = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"]

    private func paint(_ text: String, _ code: String) -> String {
        color ? "\u{1B}[\(code)m\(text)\u{1B}[0m" : text
    }

    /// The screen's lines, top to bottom, and where the cursor goes (row, column), 0-based.
    func render(width: Int) -> (lines: [String], cursor: (row: Int, column: Int)?) {
        var lines = ["", "  " + paint("\(view.form.submitLabel) — \(server)", "1"), ""]
        var cursor: (Int, Int)?
        for (index, field) in view.form.fields.enumerated() {
            let value = values[field.name] ?? ""
            let shown = field.secret ? String(repeating: "•", count: value.count) : value
            let focused = index == focus
            lines.append("  " + (focused ? paint(field.label, "1") : field.label))
            let room = max(10, width - 8)
            let visible = shown.count > room ? "…" + String(shown.suffix(room - 1)) : shown
            lines.append("  " + (focused ? paint("›", "36") : " ") + " " + visible)
            if focused { cursor = (lines.count - 1, 4 + visible.count) }
            lines.append("    " + status(of: field.name))
            lines.append("")
        }
        let button = "[ \(view.form.submitLabel) ]"
        if view.busy {
            lines.append("  " + paint(button, "2") + "  " + paint("\(Self.spinner[spinnerFrame % Self.spinner.count]) working…", "33"))
        } else if view.enabled {
            lines.append("  " + paint(button, "1;7") + "  " + paint("Enter to submit", "2"))
        } else {
            lines.append("  " + paint(button, "2") + paint(color ? "" : "  (disabled)", "2"))
        }
        lines.append("")
        if let result = view.result {
            let mark = result.ok ? paint("✓ \(result.message)", "1;32") : paint("✗ \(result.message)", "1;31")
            lines.append("  " + mark + (result.user.map { "  (\($0))" } ?? ""))
            if let token = result.token { lines.append("  token: \(token)") }
        } else {
            lines.append("")
        }
        lines.append(notice.map { "  " + paint($0, "33") } ?? "")
        lines.append("")
        lines.append("  " + paint("Tab/↑/↓ move · Enter submit · Ctrl-U clear · Esc quit", "2"))
        return (lines, cursor)
    }

    private func status(of field: String) -> String {
        let state = view.fields[field] ?? SessionView.FieldState()
        switch state.state {
        case "ok": return paint("✓ \(state.message)", "32")
        case "failed": return paint("✗ \(state.message)", "31")
        case "validating": return paint("… checking", "2")
        default: return ""
        }
    }
}
