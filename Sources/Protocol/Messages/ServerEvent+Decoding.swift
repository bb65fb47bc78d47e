/// Why a server message could not be read as a `ServerEvent`.
public enum ServerEventDecodingError: Error, Sendable, Equatable {
    /// The line is not a JSON object.
    case notAnObject
    /// A member of an event this library knows is missing or of the wrong type. (An event
    /// or error code it does not know is no failure: it decodes as `ServerEvent.unknown`.)
    case invalidMember(event: String, member: String)
}

extension ServerEvent {
    /// Reads one server line, the inverse of `encode(into:)`.
    public static func decode(line: [UInt8]) throws(ServerEventDecodingError) -> ServerEvent {
        guard let object = try? JSONParser.parse(line).objectValue else { throw .notAnObject }
        return try decode(object)
    }

    /// Reads a parsed server message, the inverse of `encode(into:)`. Unknown members are
    /// ignored, as the protocol allows servers to add them; an unknown event, or an `error`
    /// with an unknown code, is `.unknown` with every member as sent.
    public static func decode(_ object: JSONObject) throws(ServerEventDecodingError) -> ServerEvent {
        let event = object["event"]?.stringValue ?? ""
        let reader = MemberReader(object: object, event: event)
        let id = try reader.requestID()
        switch event {
        case "hello":
            let limits = try reader.object("limits")
            let limitReader = MemberReader(object: limits, event: "hello")
            return .hello(
                server: try reader.string("server"), forms: try reader.strings("forms"),
                limits: ServerLimits(
                    maxLineBytes: try limitReader.int("maxLineBytes"),
                    maxSessionsPerConnection: try limitReader.int("maxSessionsPerConnection"),
                    maxOutputBytes: try limitReader.int("maxOutputBytes")
                ),
                protocol: try reader.string("protocol")
            )
        case "description":
            let forms = try reader.objects("forms").map { (form) throws(ServerEventDecodingError) in try FormDescription.decode(form) }
            return .description(forms: forms, locale: try reader.optionalString("locale"), id: id)
        case "opened", "attached", "resumed":
            let (session, form, locale) = (try reader.string("session"), try reader.string("form"), try reader.optionalString("locale"))
            switch event {
            case "opened": return .opened(session: session, form: form, locale: locale, resume: try reader.optionalString("resume"), id: id)
            case "attached": return .attached(session: session, form: form, locale: locale, id: id)
            default: return .resumed(session: session, form: form, locale: locale, id: id)
            }
        case "client": return .clientNamed(client: try reader.string("client"), address: try reader.optionalString("address"), id: id)
        case "locale": return .localeChanged(session: try reader.string("session"), locale: try reader.string("locale"), id: id)
        case "closed": return .closed(session: try reader.string("session"), reason: try reader.optionalString("reason"), id: id)
        case "pong": return .pong(id: id)
        case "verified": return .verified(user: try reader.string("user"), id: id)
        case "revoked": return .revoked(id: id)
        case "sessions":
            let sessions = try reader.objects("sessions").map { (summary) throws(ServerEventDecodingError) in
                let item = MemberReader(object: summary, event: "sessions")
                return SessionSummary(session: try item.string("session"), form: try item.string("form"), ageSeconds: try item.int("ageSeconds"), views: try item.int("views"),
                    detachedSeconds: try item.optionalInt("detachedSeconds"), uid: try item.optionalInt("uid"), client: try item.optionalString("client"))
            }
            return .sessionList(sessions: sessions, next: try reader.optionalString("next"), id: id)
        case "status":
            return .status(report: JSONObject(object.members.filter { $0.key != "event" && $0.key != "id" }), id: id)
        case "signups":
            return .signups(
                SignupsState(paused: try reader.bool("paused"), message: try reader.optionalString("message"), since: try reader.optionalInt("since"), byUID: try reader.optionalInt("byUid")),
                id: id
            )
        case "validation", "enabled", "busy", "result":
            return .session(session: try reader.string("session"), seq: UInt64(try reader.int("seq")), try SessionEvent.decode(reader, event: event), id: id)
        case "error":
            let (code, message) = (try reader.string("code"), try reader.string("message"))
            guard let known = ErrorCode(rawValue: code) else { return .unknown(UnknownServerEvent(event: event, members: object)) }
            return .error(code: known, message: message, session: try reader.optionalString("session"), id: id)
        case "bye": return .bye(reason: try reader.string("reason"))
        default: return .unknown(UnknownServerEvent(event: event, members: object))
        }
    }

    /// Whether this library could not name the event (or its error code): `.unknown`.
    public var isUnknown: Bool {
        if case .unknown = self { true } else { false }
    }

    /// The request id the event echoes, if any.
    public var id: RequestID? {
        switch self {
        case .hello, .bye: nil
        case .unknown(let unknown): unknown.id
        case .description(_, _, let id), .opened(_, _, _, _, let id), .attached(_, _, _, let id), .resumed(_, _, _, let id), .clientNamed(_, _, let id),
            .localeChanged(_, _, let id),
            .closed(_, _, let id), .pong(let id), .verified(_, let id), .revoked(let id), .sessionList(_, _, let id), .session(_, _, _, let id), .error(_, _, _, let id),
            .status(_, let id), .signups(_, let id):
            id
        }
    }
}

extension SessionEvent {
    fileprivate static func decode(_ reader: MemberReader, event: String) throws(ServerEventDecodingError) -> SessionEvent {
        switch event {
        case "validation":
            guard let state = ValidationState(rawValue: try reader.string("state")) else { throw .invalidMember(event: event, member: "state") }
            return .validation(field: try reader.string("field"), state: state, message: try reader.message())
        case "enabled": return .enabled(try reader.bool("value"))
        case "busy": return .busy(try reader.bool("value"))
        default:
            return .result(ok: try reader.bool("ok"), message: try reader.message(), user: try reader.optionalString("user"), token: try reader.optionalString("token"))
        }
    }
}

extension FormDescription {
    fileprivate static func decode(_ object: JSONObject) throws(ServerEventDecodingError) -> FormDescription {
        let form = MemberReader(object: object, event: "description")
        let fields = try form.objects("fields").map { (field) throws(ServerEventDecodingError) in
            let reader = MemberReader(object: field, event: "description")
            let rules = try reader.optionalObject("rules").map { (rules) throws(ServerEventDecodingError) in
                try FieldRulesDescription.decode(MemberReader(object: rules, event: "description"))
            }
            return Field(name: try reader.string("name"), secret: try reader.bool("secret"), label: try reader.string("label"), rules: rules, kind: try reader.optionalString("kind"))
        }
        return FormDescription(
            name: try form.string("name"), fields: fields, submitLabel: try form.string("submitLabel"),
            title: try form.optionalString("title"), action: try form.optionalString("action")
        )
    }
}

extension FieldRulesDescription {
    fileprivate static func decode(_ r: MemberReader) throws(ServerEventDecodingError) -> FieldRulesDescription {
        var rules = FieldRulesDescription()
        rules.minCharacters = try r.optionalInt("minCharacters")
        rules.maxCharacters = try r.optionalInt("maxCharacters")
        rules.maxBytes = try r.optionalInt("maxBytes")
        rules.maxInputBytes = try r.optionalInt("maxInputBytes")
        rules.normalization = try r.optionalString("normalization")
        rules.appliesTo = try r.optionalStrings("appliesTo")
        rules.allowedCategories = try r.optionalStrings("allowedCategories")
        rules.refusedProperties = try r.optionalStrings("refusedProperties")
        rules.refusedCodePoints = try r.optionalStrings("refusedCodePoints")
        rules.requiredCategories = try r.optionalStrings("requiredCategories")
        rules.combiningMarks = try r.optionalString("combiningMarks")
        rules.maxMarksPerCharacter = try r.optionalInt("maxMarksPerCharacter")
        rules.maxCodePointsPerCharacter = try r.optionalInt("maxCodePointsPerCharacter")
        rules.bidiRule = try r.optionalString("bidiRule")
        rules.scriptRestriction = try r.optionalString("scriptRestriction")
        rules.identity = try r.optionalString("identity")
        rules.confusables = try r.optionalString("confusables")
        rules.unicodeVersion = try r.optionalString("unicodeVersion")
        rules.equalsField = try r.optionalString("equalsField")
        rules.minDigits = try r.optionalInt("minDigits")
        rules.maxDigits = try r.optionalInt("maxDigits")
        rules.region = try r.optionalString("region")
        rules.notContainingField = try r.optionalString("notContainingField")
        rules.email = try r.optionalBool("email")
        rules.passwordQuality = try r.optionalString("passwordQuality")
        return rules
    }
}

/// A server event's members: every failure names the event and the member.
private typealias MemberReader = JSONMembers<ServerEventDecodingError>

extension ServerEventDecodingError: JSONMemberFailure {
    /// Any member problem: the event and the member.
    init(member: String, problem: JSONMemberProblem, context event: String) {
        self = .invalidMember(event: event, member: member)
    }
}

extension JSONMembers where Failure == ServerEventDecodingError {
    fileprivate init(object: JSONObject, event: String) {
        self.init(object: object, context: event)
    }

    /// `message`, `messageId` and `params` of a validation or result.
    fileprivate func message() throws(ServerEventDecodingError) -> LocalizedMessage {
        let params = try object("params").members.map { (member) throws(ServerEventDecodingError) in
            if let text = member.value.stringValue { return LocalizedMessage.Parameter(member.key, .string(text)) }
            guard let number = member.value.int64Value.flatMap({ Int(exactly: $0) }) else { throw failure("params", .invalid("not a string or an integer")) }
            return LocalizedMessage.Parameter(member.key, .integer(number))
        }
        return LocalizedMessage(id: try string("messageId"), params: params, text: try string("message"))
    }
}
