/// A message from server to client in protocol v1.
public enum ServerEvent: Sendable, Equatable {
    /// `protocol`: the protocol name and major version spoken (this library's, `signup/1`,
    /// when the server sends it).
    case hello(server: String, forms: [String], limits: ServerLimits, protocol: String = ServerEvent.protocolName)
    case description(forms: [FormDescription], locale: String?, id: RequestID?)
    /// `resume`: the secret that takes the session back after this connection drops (`resume` op).
    case opened(session: String, form: String, locale: String?, resume: String?, id: RequestID?)
    case attached(session: String, form: String, locale: String?, id: RequestID?)
    /// A `resume` took the session back: this connection is its opener again; a snapshot follows.
    case resumed(session: String, form: String, locale: String?, id: RequestID?)
    /// A trusted front end named the client this connection speaks for (`client` op);
    /// `address` as the server reads it (normalised), when one was given.
    case clientNamed(client: String, address: String?, id: RequestID?)
    /// The session's locale changed (`locale` op); its snapshot follows in the new language.
    case localeChanged(session: String, locale: String, id: RequestID?)
    /// `reason`: why the server ended it (absent when a client's `close` or the opener's
    /// leaving did), e.g. "idle: no request for 900 seconds".
    case closed(session: String, reason: String? = nil, id: RequestID?)
    case pong(id: RequestID?)
    case verified(user: String, id: RequestID?)
    /// A `logout`'s token was revoked: it verifies nowhere any more.
    case revoked(id: RequestID?)
    /// A page of `sessions`; `next` (absent on the last page) asks for the one after it.
    case sessionList(sessions: [SessionSummary], next: String? = nil, id: RequestID?)
    /// The answer to `status`: its members (version, uptime, store, connections, rates…) as
    /// PROTOCOL.md lists them; servers may add more.
    case status(report: JSONObject, id: RequestID?)
    /// The answer to `signups`: whether sign-up is paused now, and by whom and why.
    case signups(SignupsState, id: RequestID?)
    case session(session: String, seq: UInt64, SessionEvent, id: RequestID?)
    case error(code: ErrorCode, message: String, session: String?, id: RequestID?)
    case bye(reason: String)
    /// An event this library does not know (a newer server's), or an `error` whose code it
    /// does not know: PROTOCOL.md promises that servers may add both, and that clients go on.
    case unknown(UnknownServerEvent)

    /// The protocol name and major version spoken.
    public static let protocolName = "signup/1"
}

/// One live session as `sessions` lists it.
public struct SessionSummary: Sendable, Equatable {
    public var session: String
    public var form: String
    /// Whole seconds since the session was opened.
    public var ageSeconds: Int
    /// Connections attached besides the opener.
    public var views: Int
    /// Whole seconds since the opener's connection dropped, while the session waits to be
    /// resumed; nil while its opener holds it.
    public var detachedSeconds: Int?

    /// Whose it is, in `sessions` with `all` (administrators): the uid, and a front end's client.
    public var uid: Int?
    public var client: String?

    public init(session: String, form: String, ageSeconds: Int, views: Int, detachedSeconds: Int? = nil, uid: Int? = nil, client: String? = nil) {
        self.session = session
        self.form = form
        self.ageSeconds = ageSeconds
        self.views = views
        self.detachedSeconds = detachedSeconds
        self.uid = uid
        self.client = client
    }
}

/// Sign-up paused or not (`signups`).
public struct SignupsState: Sendable, Equatable {
    public var paused: Bool
    /// The operator's words, shown to people in the paused forms.
    public var message: String?
    /// Since when, in seconds since the Unix epoch, and who paused it.
    public var since: Int?
    public var byUID: Int?

    public init(paused: Bool, message: String? = nil, since: Int? = nil, byUID: Int? = nil) {
        self.paused = paused
        self.message = message
        self.since = since
        self.byUID = byUID
    }
}

/// A change of a session's visible state.
public enum SessionEvent: Sendable, Equatable {
    case validation(field: String, state: ValidationState, message: LocalizedMessage)
    case enabled(Bool)
    case busy(Bool)
    case result(ok: Bool, message: LocalizedMessage, user: String?, token: String?)
}

/// A server message whose `event`, or whose error `code`, this library does not know, kept
/// whole so that a caller can read what it needs and pass the rest on.
public struct UnknownServerEvent: Sendable, Equatable {
    /// The `event` member as sent (`""` when it had none).
    public var event: String
    /// Every member as sent, in order.
    public var members: JSONObject

    public init(event: String, members: JSONObject) {
        self.event = event
        self.members = members
    }

    /// The request it answers, if it carries an `id`.
    public var id: RequestID? { members["id"].flatMap(RequestID.init(json:)) }

    /// For an `error` with a code this library does not know: that code.
    public var errorCode: String? { event == "error" ? members["code"]?.stringValue : nil }

    /// The human text of an `error`, if it has one.
    public var message: String? { members["message"]?.stringValue }

    /// The session it concerns, if it names one.
    public var session: String? { members["session"]?.stringValue }
}

extension ServerEvent {
    /// The members `opened`, `attached` and `resumed` share.
    private static func encodeHeld(_ event: String, session: String, form: String, locale: String?, id: RequestID?, into writer: inout JSONWriter) {
        writer.member("event", event)
        if let id { writer.member("id", id) }
        writer.member("session", session)
        writer.member("form", form)
        if let locale { writer.member("locale", locale) }
    }

    /// Appends the event as one JSON line.
    public func encode(into writer: inout JSONWriter) {
        if case .unknown(let unknown) = self {
            // As it came: this library cannot know what its members mean.
            writer.value(.object(unknown.members))
            writer.endLine()
            return
        }
        if case .session(let session, let seq, let event, let id) = self {
            Self.encode(event, session: session, seq: seq, id: id, into: &writer)
            writer.endLine()
            return
        }
        writer.beginObject()
        switch self {
        case .hello(let server, let forms, let limits, let spoken):
            writer.member("event", "hello")
            writer.member("protocol", spoken)
            writer.member("server", server)
            writer.beginArray("forms")
            for form in forms { writer.element(form) }
            writer.endArray()
            writer.key("limits")
            writer.beginObject()
            writer.member("maxLineBytes", limits.maxLineBytes)
            writer.member("maxSessionsPerConnection", limits.maxSessionsPerConnection)
            writer.member("maxOutputBytes", limits.maxOutputBytes)
            writer.endObject()
        case .description(let forms, let locale, let id):
            writer.member("event", "description")
            if let id { writer.member("id", id) }
            if let locale { writer.member("locale", locale) }
            writer.beginArray("forms")
            for form in forms {
                writer.beginObject()
                writer.member("name", form.name)
                if let title = form.title { writer.member("title", title) }
                writer.member("submitLabel", form.submitLabel)
                if let action = form.action { writer.member("action", action) }
                writer.beginArray("fields")
                for field in form.fields {
                    writer.beginObject()
                    writer.member("name", field.name)
                    writer.member("secret", field.secret)
                    writer.member("label", field.label)
                    if let kind = field.kind { writer.member("kind", kind) }
                    if let rules = field.rules { Self.write(rules, to: &writer) }
                    writer.endObject()
                }
                writer.endArray()
                writer.endObject()
            }
            writer.endArray()
        case .opened(let session, let form, let locale, let resume, let id):
            Self.encodeHeld("opened", session: session, form: form, locale: locale, id: id, into: &writer)
            if let resume { writer.member("resume", resume) }
        case .attached(let session, let form, let locale, let id):
            Self.encodeHeld("attached", session: session, form: form, locale: locale, id: id, into: &writer)
        case .resumed(let session, let form, let locale, let id):
            Self.encodeHeld("resumed", session: session, form: form, locale: locale, id: id, into: &writer)
        case .clientNamed(let client, let address, let id):
            writer.member("event", "client")
            if let id { writer.member("id", id) }
            writer.member("client", client)
            if let address { writer.member("address", address) }
        case .localeChanged(let session, let locale, let id):
            writer.member("event", "locale")
            if let id { writer.member("id", id) }
            writer.member("session", session)
            writer.member("locale", locale)
        case .closed(let session, let reason, let id):
            writer.member("event", "closed")
            if let id { writer.member("id", id) }
            writer.member("session", session)
            if let reason { writer.member("reason", reason) }
        case .pong(let id):
            writer.member("event", "pong")
            if let id { writer.member("id", id) }
        case .verified(let user, let id):
            writer.member("event", "verified")
            if let id { writer.member("id", id) }
            writer.member("user", user)
        case .revoked(let id):
            writer.member("event", "revoked")
            if let id { writer.member("id", id) }
        case .sessionList(let sessions, let next, let id):
            writer.member("event", "sessions")
            if let id { writer.member("id", id) }
            if let next { writer.member("next", next) }
            writer.beginArray("sessions")
            for summary in sessions {
                writer.beginObject()
                writer.member("session", summary.session)
                writer.member("form", summary.form)
                writer.member("ageSeconds", summary.ageSeconds)
                writer.member("views", summary.views)
                if let detached = summary.detachedSeconds { writer.member("detachedSeconds", detached) }
                if let uid = summary.uid { writer.member("uid", uid) }
                if let client = summary.client { writer.member("client", client) }
                writer.endObject()
            }
            writer.endArray()
        case .status(let report, let id):
            writer.member("event", "status")
            if let id { writer.member("id", id) }
            for member in report.members where member.key != "event" && member.key != "id" {
                writer.key(member.key)
                writer.value(member.value)
            }
        case .signups(let state, let id):
            writer.member("event", "signups")
            if let id { writer.member("id", id) }
            writer.member("paused", state.paused)
            if let message = state.message { writer.member("message", message) }
            if let since = state.since { writer.member("since", since) }
            if let byUID = state.byUID { writer.member("byUid", byUID) }
        case .session:
            break  // written above
        case .error(let code, let message, let session, let id):
            writer.member("event", "error")
            if let id { writer.member("id", id) }
            writer.member("code", code.rawValue)
            writer.member("message", message)
            if let session { writer.member("session", session) }
        case .bye(let reason):
            writer.member("event", "bye")
            writer.member("reason", reason)
        case .unknown:
            break  // written above
        }
        writer.endObject()
        writer.endLine()
    }

    /// A session's event: the answer to every keystroke, so written as its fixed text with
    /// the values between (`JSONWriter.fixed`), not member by member (issue 29: quoting and
    /// scanning each key and deciding each comma was most of the cost of encoding it).
    /// The members and their order are those `ServerEvent+Decoding` reads.
    private static func encode(_ event: SessionEvent, session: String, seq: UInt64, id: RequestID?, into writer: inout JSONWriter) {
        switch event {
        case .validation: writer.beginFixed(#"{"event":"validation","session":"#)
        case .enabled: writer.beginFixed(#"{"event":"enabled","session":"#)
        case .busy: writer.beginFixed(#"{"event":"busy","session":"#)
        case .result: writer.beginFixed(#"{"event":"result","session":"#)
        }
        writer.quoted(session)
        writer.fixed(#","seq":"#)
        writer.unsigned(seq)
        if let id {
            writer.fixed(#","id":"#)
            switch id {
            case .string(let text): writer.quoted(text)
            case .integer(let number): writer.integer(number)
            }
        }
        switch event {
        case .validation(let field, let state, let message):
            writer.fixed(#","field":"#)
            writer.quoted(field)
            switch state {
            case .empty: writer.fixed(#","state":"empty""#)
            case .validating: writer.fixed(#","state":"validating""#)
            case .ok: writer.fixed(#","state":"ok""#)
            case .failed: writer.fixed(#","state":"failed""#)
            }
            write(message, to: &writer)
        case .enabled(let value), .busy(let value):
            writer.fixed(value ? #","value":true"# : #","value":false"#)
        case .result(let ok, let message, let user, let token):
            writer.fixed(ok ? #","ok":true"# : #","ok":false"#)
            write(message, to: &writer)
            if let user {
                writer.fixed(#","user":"#)
                writer.quoted(user)
            }
            if let token {
                writer.fixed(#","token":"#)
                writer.quoted(token)
            }
        }
        writer.endFixed("}")
    }

    /// `message`, `messageId` and `params` of a validation or result, as members that follow others.
    private static func write(_ message: LocalizedMessage, to writer: inout JSONWriter) {
        writer.fixed(#","message":"#)
        writer.quoted(message.text)
        writer.fixed(#","messageId":"#)
        writer.quoted(message.id)
        writer.fixed(#","params":{"#)
        for (index, parameter) in message.params.enumerated() {
            if index > 0 { writer.fixed(",") }
            writer.quoted(parameter.name)
            writer.fixed(":")
            switch parameter.value {
            case .integer(let value): writer.integer(Int64(value))
            case .string(let value): writer.quoted(value)
            }
        }
        writer.fixed("}")
    }

    /// A field's rules as the `rules` member of its description.
    private static func write(_ rules: FieldRulesDescription, to writer: inout JSONWriter) {
        writer.key("rules")
        writer.beginObject()
        if let value = rules.minCharacters { writer.member("minCharacters", value) }
        if let value = rules.maxCharacters { writer.member("maxCharacters", value) }
        if let value = rules.maxBytes { writer.member("maxBytes", value) }
        if let value = rules.maxInputBytes { writer.member("maxInputBytes", value) }
        if let value = rules.normalization { writer.member("normalization", value) }
        write(rules.appliesTo, as: "appliesTo", to: &writer)
        write(rules.allowedCategories, as: "allowedCategories", to: &writer)
        write(rules.refusedProperties, as: "refusedProperties", to: &writer)
        write(rules.refusedCodePoints, as: "refusedCodePoints", to: &writer)
        write(rules.requiredCategories, as: "requiredCategories", to: &writer)
        if let value = rules.combiningMarks { writer.member("combiningMarks", value) }
        if let value = rules.maxMarksPerCharacter { writer.member("maxMarksPerCharacter", value) }
        if let value = rules.maxCodePointsPerCharacter { writer.member("maxCodePointsPerCharacter", value) }
        if let value = rules.bidiRule { writer.member("bidiRule", value) }
        if let value = rules.scriptRestriction { writer.member("scriptRestriction", value) }
        if let value = rules.identity { writer.member("identity", value) }
        if let value = rules.confusables { writer.member("confusables", value) }
        if let value = rules.unicodeVersion { writer.member("unicodeVersion", value) }
        if let value = rules.equalsField { writer.member("equalsField", value) }
        if let value = rules.minDigits { writer.member("minDigits", value) }
        if let value = rules.maxDigits { writer.member("maxDigits", value) }
        if let value = rules.region { writer.member("region", value) }
        if let value = rules.notContainingField { writer.member("notContainingField", value) }
        if let value = rules.email { writer.member("email", value) }
        if let value = rules.passwordQuality { writer.member("passwordQuality", value) }
        writer.endObject()
    }

    private static func write(_ values: [String]?, as name: String, to writer: inout JSONWriter) {
        guard let values else { return }
        writer.beginArray(name)
        values.forEach { writer.element($0) }
        writer.endArray()
    }

    /// The event encoded as one line of UTF-8, newline included.
    public var line: [UInt8] {
        var writer = JSONWriter()
        encode(into: &writer)
        return writer.bytes
    }
}

extension ServerEvent {
    /// `bye`'s reason to a client greeted by a start that then failed (PROTOCOL.md, `bye`):
    /// said by signupd, recognised by its clients.
    public static let startFailedReason = "start failed"
}
