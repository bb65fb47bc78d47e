import SignupClient
import SignupProtocol

/// The page of one form, drawn from signupd's `describe`: the same HTML serves a browser
/// with script (app.js takes the form over and validates every keystroke through the
/// WebSocket) and one without (the form POSTs, and the answer carries each field's message).
struct PageRenderer: Sendable {
    /// What one page shows.
    struct Content: Sendable {
        var form: FormDescription
        /// Every form's name and title, for the navigation.
        var forms: [(name: String, title: String)]
        var locale: String
        var csrf: String
        /// Values to show again (not secret ones).
        var values: [String: String] = [:]
        var validations: [String: FieldValidation] = [:]
        var result: FormResult?
        var signedIn: String?
        /// A problem of the bridge's own (signupd unreachable, an expired form).
        var notice: String?
    }

    func render(_ content: Content) -> String {
        let text = UIText.of(content.locale)
        let form = content.form
        let title = form.title ?? form.submitLabel
        // After a plain POST the answer is what a screen reader hears first, and where focus is.
        let firstFailed = form.fields.first { content.validations[$0.name]?.state == .failed }?.name
        let pageTitle = content.result.map { "\($0.message) · \(title)" } ?? (firstFailed != nil ? "\(text.check) · \(title)" : title)
        var html = """
            <!doctype html>
            <html lang="\(escape(content.locale))">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>\(escape(pageTitle))</title>
            <link rel="stylesheet" href="/static/app.css">
            <script src="/static/app.js" defer></script>
            </head>
            <body>
            <a class="skip" href="#form">\(escape(text.skipToForm))</a>
            <header>
            <nav aria-label="\(escape(text.formsLabel))" class="forms">
            """
        for other in content.forms {
            let current = other.name == form.name ? #" aria-current="page""# : ""
            html += #"<a href="/\#(escape(other.name))"\#(current) data-form-link="\#(escape(other.name))">\#(escape(other.title))</a>"# + "\n"
        }
        html += """
            </nav>
            <nav aria-label="\(escape(text.languageLabel))" class="languages">
            """
        for locale in LocaleChoice.offered {
            let current = locale == content.locale ? #" aria-current="true""# : ""
            html += #"<a href="?lang=\#(locale)" hreflang="\#(locale)" lang="\#(locale)" data-locale="\#(locale)"\#(current)>\#(escape(UIText.of(locale).language))</a>"# + "\n"
        }
        html += """
            </nav>
            </header>
            <main>
            <h1 id="title">\(escape(title))</h1>

            """
        if let notice = content.notice { html += #"<p id="notice" class="notice" role="alert">\#(escape(notice))</p>"# + "\n" }
        html += """
            <form id="form" method="post" action="/\(escape(form.name))" data-form="\(escape(form.name))" data-locale="\(escape(content.locale))" data-kept="\(escape(text.keptByServer))" data-plain="\(escape(text.plainForm))" data-unavailable="\(escape(text.unavailable))" novalidate>
            <input type="hidden" name="csrf" value="\(escape(content.csrf))">

            """
        for field in form.fields {
            let validation = content.validations[field.name]
            let state = validation?.state.rawValue ?? "empty"
            let value = field.secret ? "" : content.values[field.name] ?? ""
            let invalid = (state == "failed" ? #" aria-invalid="true""# : "") + (content.result == nil && field.name == firstFailed ? " autofocus" : "")
            html += """
                <div class="field" data-field="\(escape(field.name))">
                <label for="f-\(escape(field.name))">\(escape(field.label))</label>
                <input id="f-\(escape(field.name))" name="\(escape(field.name))" type="\(inputType(field))" autocomplete="\(autocomplete(field, action: form.action))" aria-describedby="m-\(escape(field.name))" value="\(escape(value))"\(invalid)>
                <p id="m-\(escape(field.name))" class="message" data-state="\(escape(state))" aria-live="polite">\(escape(validation?.message ?? ""))</p>
                </div>

                """
        }
        html += """
            <button id="submit" type="submit"><span class="label">\(escape(form.submitLabel))</span><span class="spinner" aria-hidden="true"></span></button>
            <p id="busy" class="busy" role="status" hidden>\(escape(text.working))</p>
            """
        if let result = content.result {
            html += #"<p id="result" class="result" role="alert" data-ok="\#(result.ok)" tabindex="-1" autofocus>\#(escape(result.message))</p>"# + "\n"
        } else {
            html += #"<p id="result" class="result" role="alert" hidden></p>"# + "\n"
        }
        html += "</form>\n"
        html += signedInBlock(content.signedIn, csrf: content.csrf, text: text)
        html += "</main>\n</body>\n</html>\n"
        return html
    }

    private func signedInBlock(_ user: String?, csrf: String, text: UIText) -> String {
        let hidden = user == nil ? " hidden" : ""
        return """
            <form id="signed-in" class="signed-in" method="post" action="/logout"\(hidden)>
            <input type="hidden" name="csrf" value="\(escape(csrf))">
            <span>\(escape(text.signedInAs)) <strong id="user">\(escape(Self.shown(user ?? "")))</strong></span>
            <button type="submit">\(escape(text.logOut))</button>
            </form>

            """
    }

    /// A user as a person reads it: a phone account's `tel:` URI without its scheme.
    static func shown(_ user: String) -> String {
        user.hasPrefix("tel:") ? String(user.dropFirst(4)) : user
    }

    private func inputType(_ field: FormDescription.Field) -> String {
        if field.secret { return "password" }
        switch field.kind {
        case "phone": return "tel"
        case "email": return "email"
        default: return "text"
        }
    }

    private func autocomplete(_ field: FormDescription.Field, action: String?) -> String {
        if field.secret { return action == "login" ? "current-password" : "new-password" }
        switch field.kind {
        case "phone": return "tel"
        case "email": return "email"
        case "username": return "username"
        default: return "off"
        }
    }
}

/// Text made safe for HTML content and attribute values.
func escape(_ text: String) -> String {
    var out = ""
    out.reserveCapacity(text.utf8.count)
    for character in text.unicodeScalars {
        switch character {
        case "&": out += "&amp;"
        case "<": out += "&lt;"
        case ">": out += "&gt;"
        case "\"": out += "&quot;"
        case "'": out += "&#39;"
        default: out.unicodeScalars.append(character)
        }
    }
    return out
}
