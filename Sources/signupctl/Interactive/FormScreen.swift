import SignupClient
import SignupProtocol

/// What the interactive form shows, as a pure function of its state and the window size.
/// Every frame is exactly `rows` lines, none wider than `columns - 1`, so that drawing
/// never wraps or scrolls. Three layouts: roomy (a field takes four lines), compact (two),
/// and below the minimum a one-line "terminal too small" notice.
struct FormScreen {
    var view: SessionView
    var editors: [String: LineEditor] = [:]
    var focus = 0
    var spinnerFrame = 0
    var color: Bool
    var server = "signupd"
    /// The frame's own words, in the session's language.
    var text = ScreenText.english
    /// A notice from the daemon or the client (an error, "press any key").
    var notice: String?
    /// A key came while the window was too small and was dropped (the notice says so).
    var droppedKeys = false

    static let spinner = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"]
    static let minimumColumns = 48

    /// A run of text in one style (an SGR parameter string, or nil for plain).
    struct Span {
        var text: String
        var style: String?
        init(_ text: String, _ style: String? = nil) {
            self.text = text
            self.style = style
        }
    }

    struct Frame {
        var lines: [[Span]]
        /// Where the cursor goes (row, column), 0-based; nil hides it.
        var cursor: (row: Int, column: Int)?
        var tooSmall = false
    }

    func value(of field: String) -> String { editors[field]?.text ?? "" }

    var fieldCount: Int { view.form.fields.count }
    /// Rows the roomy layout needs.
    var roomyRows: Int { 4 * fieldCount + 9 }
    /// Rows the compact layout needs: the smallest the form can be.
    var compactRows: Int { 2 * fieldCount + 5 }

    /// Whether the window is below the smallest layout: the form shows a notice only, and
    /// keys other than Esc and Ctrl-C are dropped (they would edit fields nobody sees).
    func tooSmall(columns: Int, rows: Int) -> Bool {
        columns < Self.minimumColumns || rows < compactRows
    }

    /// Whether the form is done: a successful result, any key leaves.
    var finished: Bool { view.result?.ok == true }

    func render(columns: Int, rows: Int) -> Frame {
        let width = columns - 1
        var frame: Frame
        if tooSmall(columns: columns, rows: rows) {
            // Wrapped to the window, so that how to quit always shows.
            var lines = DisplayWidth.wrap(text.tooSmall(columns, rows, Self.minimumColumns, compactRows), width: max(1, width)).map { [Span($0, "1;33")] }
            if droppedKeys { lines += DisplayWidth.wrap(text.typingIgnored, width: max(1, width)).map { [Span($0, "33")] } }
            frame = Frame(lines: lines, cursor: nil, tooSmall: true)
        } else if columns >= 60 && rows >= roomyRows {
            frame = roomy(width: width)
        } else {
            frame = compact(width: width)
        }
        frame.lines = frame.lines.prefix(rows).map { clip($0, to: width) }
        while frame.lines.count < rows { frame.lines.append([]) }
        if let cursor = frame.cursor, cursor.row >= rows || cursor.column >= width { frame.cursor = nil }
        return frame
    }

    private func roomy(width: Int) -> Frame {
        var lines: [[Span]] = [[], [Span("  "), Span(text.header(heading, server), "1")], []]
        var cursor: (Int, Int)?
        for (index, field) in view.form.fields.enumerated() {
            let focused = index == focus
            lines.append([Span("  "), Span(field.label, focused ? "1" : nil)])
            let (shown, column) = window(of: field, room: width - 5)
            lines.append([Span("  "), Span(focused ? "›" : " ", "36"), Span(" " + shown)])
            if focused { cursor = (lines.count - 1, 4 + column) }
            lines.append([Span("    ")] + status(of: field.name))
            lines.append([])
        }
        lines.append([Span("  ")] + button())
        lines.append([])
        lines.append([Span("  ")] + outcome())
        lines.append(notice.map { [Span("  "), Span($0, "33")] } ?? [])
        // The full hints when they fit, else the short ones (which still say how to quit).
        let hints = DisplayWidth.of(text.keysRoomy) + 2 <= width ? text.keysRoomy : text.keysCompact
        lines.append([Span("  "), Span(finished ? text.done : hints, "2")])
        lines.append([Span("  "), Span(footer, "2")])
        return Frame(lines: lines, cursor: cursor)
    }

    private func compact(width: Int) -> Frame {
        var lines: [[Span]] = [[Span(text.header(heading, server), "1")]]
        var cursor: (Int, Int)?
        let labelWidth = min(18, (view.form.fields.map { DisplayWidth.of($0.label) }.max() ?? 0) + 1)
        for (index, field) in view.form.fields.enumerated() {
            let focused = index == focus
            let labelWidthHere = DisplayWidth.of(field.label)
            let label = field.label + String(repeating: " ", count: max(1, labelWidth - labelWidthHere))
            let prefixWidth = 2 + DisplayWidth.of(label)
            let (shown, column) = window(of: field, room: width - prefixWidth)
            lines.append([Span(focused ? "›" : " ", "36"), Span(" "), Span(label, focused ? "1" : nil), Span(shown)])
            if focused { cursor = (lines.count - 1, prefixWidth + column) }
            lines.append([Span("    ")] + status(of: field.name))
        }
        lines.append(view.result == nil ? button() : outcome())
        lines.append(notice.map { [Span($0, "33")] } ?? [])
        lines.append([Span(finished ? text.done : text.keysCompact, "2")])
        lines.append([Span(footer, "2")])
        return Frame(lines: lines, cursor: cursor)
    }

    private var footer: String { "\(text.session) \(view.session.isEmpty ? "—" : view.session)" }

    /// The form's title (its submit label when the daemon gives none).
    private var heading: String { view.form.title ?? view.form.submitLabel }

    /// The part of a field's value that fits in `room` columns, scrolled so the cursor
    /// shows, and the cursor's column within it — in display columns (a wide character
    /// takes two, a combining mark none), not in characters.
    private func window(of field: FormDescription.Field, room: Int) -> (String, Int) {
        let editor = editors[field.name] ?? LineEditor()
        let shown = field.secret ? Array(repeating: Character("•"), count: editor.characters.count) : editor.characters
        let room = max(1, room - 1)
        let widths = shown.map(DisplayWidth.of)
        let cursor = editor.cursor
        var start = 0
        if widths.reduce(0, +) > room {
            // The earliest start that keeps the cursor's cell, or else the end, in view.
            var cursorStart = cursor
            var used = 0
            while cursorStart > 0, used + widths[cursorStart - 1] <= room - 1 {
                cursorStart -= 1
                used += widths[cursorStart]
            }
            var tailStart = shown.count
            used = 0
            while tailStart > 0, used + widths[tailStart - 1] <= room {
                tailStart -= 1
                used += widths[tailStart]
            }
            start = min(cursorStart, tailStart)
        }
        var end = start
        var used = 0
        while end < shown.count, used + widths[end] <= room {
            used += widths[end]
            end += 1
        }
        return (String(shown[start..<end]), widths[start..<cursor].reduce(0, +))
    }

    private func button() -> [Span] {
        let label = "[ \(view.form.submitLabel) ]"
        if finished {
            return [Span(label, "2"), Span("  "), Span(text.finished, "32")]
        } else if view.busy {
            return [Span(label, "2"), Span("  "), Span("\(Self.spinner[spinnerFrame % Self.spinner.count]) \(text.working)", "33")]
        } else if view.enabled {
            return [Span(label, "1;7"), Span("  "), Span(text.enterToSubmit, "2")]
        }
        // Sign-up paused: why submit is off, from the moment the form opens.
        if let paused = view.paused { return [Span(label, "2"), Span("  ✗ \(paused.message)", "1;31")] }
        return [Span(label, "2"), Span("  " + text.disabled, "2")]
    }

    private func outcome() -> [Span] {
        guard let result = view.result else { return [] }
        var spans = [result.ok ? Span("✓ \(result.message)", "1;32") : Span("✗ \(result.message)", "1;31")]
        if let user = result.user { spans.append(Span(Say.pick("  (\(Say.shown(user: user)))", "（\(Say.shown(user: user))）"))) }
        if let token = result.token { spans.append(Span("  \(text.token) \(token)")) }
        return spans
    }

    private func status(of field: String) -> [Span] {
        let state = view.fields[field] ?? SessionView.FieldState()
        switch state.state {
        case .ok: return [Span("✓ \(state.message)", "32")]
        case .failed: return [Span("✗ \(state.message)", "31")]
        case .validating: return [Span(text.checking, "2")]
        case .empty: return []
        }
    }

    /// Cuts a line to `width` display columns.
    private func clip(_ spans: [Span], to width: Int) -> [Span] {
        var room = width
        var out: [Span] = []
        for span in spans where room > 0 {
            var text = span.text
            if DisplayWidth.of(text) > room {
                var kept = ""
                var used = 0
                for character in text {
                    let width = DisplayWidth.of(character)
                    if used + width > room - 1 { break }
                    kept.append(character)
                    used += width
                }
                text = kept + "…"
            }
            room -= DisplayWidth.of(text)
            out.append(Span(text, span.style))
        }
        return out
    }

    /// The line as terminal bytes, styled when colour is on.
    func encode(_ spans: [Span]) -> String {
        spans.map { span in
            guard color, let style = span.style, !span.text.isEmpty else { return span.text }
            return "\u{1B}[\(style)m\(span.text)\u{1B}[0m"
        }.joined()
    }

    /// Plain text of a line (for tests).
    static func plain(_ spans: [Span]) -> String { spans.map(\.text).joined() }
}
