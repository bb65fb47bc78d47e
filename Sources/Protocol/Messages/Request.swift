/// A client request of protocol v1.
public struct Request: Sendable, Equatable {
    /// What the request asks for, with its members.
    public enum Operation: Sendable, Equatable {
        case describe(locale: String?)
        case ping
        case open(form: String, locale: String?)
        /// Switches a session's locale; the session re-sends its snapshot in it.
        case locale(session: String?, locale: String)
        case attach(session: String)
        case set(session: String?, field: String, value: String)
        case submit(session: String?)
        case snapshot(session: String?)
        case close(session: String?)
        case verify(token: String)
        /// Revokes a login token on every host sharing the store (`logout`).
        case logout(token: String)
        /// A page of the live sessions opened by the caller's uid (and client), oldest first.
        case sessions(SessionsPage = .first)
        /// A trusted front end names the end client this connection speaks for (`client`),
        /// and optionally the client's IP address.
        case client(client: String, address: String?)
        /// Takes back a session whose connection dropped, proving it with the `resume`
        /// secret its `opened` carried.
        case resume(session: String, secret: String)
        /// A page of every live session of every user (`{"op":"sessions","all":true}`):
        /// administrators only.
        case allSessions(SessionsPage = .first)
        /// The daemon's state for operators (`status`): all of it for administrators, the
        /// caller's own share for others.
        case status
        /// Whether sign-up is paused (`pause` absent), or pauses (`true`, with the operator's
        /// `message`) or resumes (`false`) it: administrators only.
        case signups(pause: Bool?, message: String?)
    }

    public var id: RequestID?
    public var operation: Operation

    public init(id: RequestID? = nil, _ operation: Operation) {
        self.id = id
        self.operation = operation
    }

    /// The longest client id a front end may name, in UTF-8 bytes.
    public static let maxClientBytes = 256

    /// The `op` names of protocol v1.
    public static let operationNames = [
        "describe", "ping", "open", "attach", "set", "submit", "snapshot", "close", "verify", "logout", "sessions", "locale", "client", "resume", "status", "signups",
    ]
    /// Whether a character would move a terminal's cursor or reorder the text around it:
    /// control characters, line and paragraph separators, bidirectional overrides and isolates.
    public static func disturbsDisplay(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .control, .lineSeparator, .paragraphSeparator: return true
        default: return (0x202A...0x202E).contains(scalar.value) || (0x2066...0x2069).contains(scalar.value)
        }
    }

    /// The longest operator message `signups` takes (UTF-8 bytes).
    public static let maxSignupsMessageBytes = 512
}

/// A request that could not be understood, with the code and message to send back.
public struct RequestError: Error, Sendable, Equatable {
    public var code: ErrorCode
    public var message: String
    /// The request's `id`, when it could be read.
    public var id: RequestID?

    public init(_ code: ErrorCode, _ message: String, id: RequestID? = nil) {
        self.code = code
        self.message = message
        self.id = id
    }
}

extension Request {
    /// Decodes one line (without its terminator). A plain `set` is read straight from its
    /// bytes (`PlainSetRequest`); every other line as `decodeInFull` reads it, which gives
    /// the same answer for those too.
    public static func decode(line: UnsafeRawBufferPointer) throws(RequestError) -> Request {
        if let request = PlainSetRequest.read(line) { return request }
        return try decodeInFull(line: line)
    }

    /// Decodes one line (without its terminator) as a JSON tree first, whatever it says.
    public static func decodeInFull(line: UnsafeRawBufferPointer) throws(RequestError) -> Request {
        let value: JSONValue
        do {
            value = try JSONParser.parse(line)
        } catch {
            switch error.kind {
            case .duplicateKey: throw duplicateRefusal(error, line)
            case .syntax, .invalidUTF8, .tooDeep: throw RequestError(.invalidJSON, "\(error.message) at byte \(error.offset)")
            }
        }
        return try decode(value)
    }

    /// The refusal of a line that names a member twice, read again with both members kept:
    /// `invalid_json` when the rest of the line is not JSON either (whatever the order of the
    /// two faults: helper-41), else `invalid_request` with the request's `id` as every
    /// other refusal of a request carries it (helper-40), when it names `id` once and that
    /// is a valid id.
    private static func duplicateRefusal(_ duplicate: JSONParseError, _ line: UnsafeRawBufferPointer) -> RequestError {
        let value: JSONValue
        do {
            value = try JSONParser.parse(line, rejectsDuplicates: false)
        } catch {
            return RequestError(.invalidJSON, "\(error.message) at byte \(error.offset)")
        }
        guard case .object(let object) = value else { return RequestError(.invalidRequest, duplicate.message) }
        let ids = object.members.filter { $0.key.utf8.elementsEqual("id".utf8) }
        return RequestError(.invalidRequest, duplicate.message, id: ids.count == 1 ? RequestID(json: ids[0].value) : nil)
    }

    /// Decodes one line held in an array.
    public static func decode(line: [UInt8]) throws(RequestError) -> Request {
        let result: Result<Request, RequestError> = line.withUnsafeBytes { raw in
            Result { () throws(RequestError) -> Request in try decode(line: raw) }
        }
        return try result.get()
    }

    /// Decodes a parsed JSON value.
    public static func decode(_ value: JSONValue) throws(RequestError) -> Request {
        guard case .object(let object) = value else {
            throw RequestError(.invalidRequest, "a request must be a JSON object, not \(value.typeName)")
        }
        let id = try JSONMembers<RequestError>(object: object, context: nil).requestID()
        let members = JSONMembers<RequestError>(object: object, context: id, nullIsAbsent: true)
        let op = try members.string("op")
        let operation: Operation
        // `set` first: the cases are tried in order, and it is nearly every request.
        switch op {
        case "set":
            operation = .set(
                session: try members.optionalSession(),
                field: try members.string("field"),
                value: try members.string("value")
            )
        case "describe": operation = .describe(locale: try members.optionalLocale("locale"))
        case "ping": operation = .ping
        case "open": operation = .open(form: try members.string("form"), locale: try members.optionalLocale("locale"))
        case "locale":
            guard let locale = try members.optionalLocale("locale") else { throw RequestError(.invalidRequest, "missing member \"locale\"", id: id) }
            operation = .locale(session: try members.optionalSession(), locale: locale)
        case "attach": operation = .attach(session: try members.requiredSession())
        case "submit": operation = .submit(session: try members.optionalSession())
        case "snapshot": operation = .snapshot(session: try members.optionalSession())
        case "close": operation = .close(session: try members.optionalSession())
        case "verify": operation = .verify(token: try members.string("token"))
        case "logout": operation = .logout(token: try members.string("token"))
        case "sessions":
            let page = try members.sessionsPage()
            operation = try members.optionalBool("all") == true ? .allSessions(page) : .sessions(page)
        case "status": operation = .status
        case "signups":
            let pause = try members.optionalBool("pause")
            let message = try members.optionalString("message")
            if let message {
                guard pause == true else { throw RequestError(.invalidRequest, "\"message\" goes with \"pause\": true", id: id) }
                guard message.utf8.count <= Self.maxSignupsMessageBytes, !message.unicodeScalars.contains(where: Self.disturbsDisplay) else {
                    throw RequestError(.invalidRequest, "\"message\" must be at most \(Self.maxSignupsMessageBytes) bytes (UTF-8), without control characters, line separators or bidirectional overrides", id: id)
                }
            }
            operation = .signups(pause: pause, message: message)
        case "client":
            let client = try members.string("client")
            // An opaque id: shown to administrators and written to logs, so nothing that moves
            // a terminal's cursor or reorders text (control and format characters, separators).
            guard !client.isEmpty, client.utf8.count <= maxClientBytes,
                !client.unicodeScalars.contains(where: { Self.disturbsDisplay($0) || $0.properties.generalCategory == .format })
            else {
                throw RequestError(.invalidRequest, "\"client\" must be 1 to \(maxClientBytes) bytes (UTF-8), without control or format characters", id: id)
            }
            operation = .client(client: client, address: try members.optionalString("address"))
        case "resume": operation = .resume(session: try members.requiredSession(), secret: try members.string("resume"))
        default:
            throw RequestError(.unknownOp, "unknown op \"\(op)\"; known: \(operationNames.joined(separator: ", "))", id: id)
        }
        return Request(id: id, operation)
    }

    /// Writes the request as one JSON line (for clients).
    public func encode(into writer: inout JSONWriter) {
        writer.beginObject()
        let name: String
        switch operation {
        case .describe: name = "describe"
        case .ping: name = "ping"
        case .open: name = "open"
        case .attach: name = "attach"
        case .set: name = "set"
        case .submit: name = "submit"
        case .snapshot: name = "snapshot"
        case .close: name = "close"
        case .verify: name = "verify"
        case .logout: name = "logout"
        case .sessions, .allSessions: name = "sessions"
        case .status: name = "status"
        case .signups: name = "signups"
        case .locale: name = "locale"
        case .client: name = "client"
        case .resume: name = "resume"
        }
        writer.member("op", name)
        if let id { writer.member("id", id) }
        switch operation {
        case .ping, .status: break
        case .sessions(let page): page.encode(into: &writer)
        case .allSessions(let page):
            writer.member("all", true)
            page.encode(into: &writer)
        case .signups(let pause, let message):
            if let pause { writer.member("pause", pause) }
            if let message { writer.member("message", message) }
        case .describe(let locale): if let locale { writer.member("locale", locale) }
        case .open(let form, let locale):
            writer.member("form", form)
            if let locale { writer.member("locale", locale) }
        case .locale(let session, let locale):
            if let session { writer.member("session", session) }
            writer.member("locale", locale)
        case .attach(let session): writer.member("session", session)
        case .set(let session, let field, let value):
            if let session { writer.member("session", session) }
            writer.member("field", field)
            writer.member("value", value)
        case .submit(let session), .snapshot(let session), .close(let session):
            if let session { writer.member("session", session) }
        case .verify(let token), .logout(let token): writer.member("token", token)
        case .client(let client, let address):
            writer.member("client", client)
            if let address { writer.member("address", address) }
        case .resume(let session, let secret):
            writer.member("session", session)
            writer.member("resume", secret)
        }
        writer.endObject()
        writer.endLine()
    }
}

extension String {
    fileprivate func replacingUnderscores() -> String {
        String(String.UnicodeScalarView(unicodeScalars.map { $0 == "_" ? "-" : $0 }))
    }
}

/// What only requests have: session ids and language tags.
extension JSONMembers where Failure == RequestError {
    /// A session id: a non-empty string (an empty one names no session, and a reply
    /// echoing it would not be a session id).
    func requiredSession() throws(RequestError) -> String {
        try nonEmpty(string("session"))
    }

    /// A session id when given; absent or null: the connection's default session.
    func optionalSession() throws(RequestError) -> String? {
        guard let session = try optionalString("session") else { return nil }
        return try nonEmpty(session)
    }

    private func nonEmpty(_ session: String) throws(RequestError) -> String {
        guard !session.isEmpty else { throw failure("session", .invalid("\"session\" must be a session id, not empty")) }
        return session
    }

    /// A BCP 47 language tag such as "zh-CN"; `_` is read as `-`.
    func optionalLocale(_ key: String) throws(RequestError) -> String? {
        guard let tag = try optionalString(key) else { return nil }
        guard tag.utf8.count <= 64, LocaleTag.isWellFormed(tag) else {
            throw failure(key, .invalid("\"\(key)\" must be a BCP 47 language tag such as \"en\" or \"zh-CN\""))
        }
        return tag.replacingUnderscores()
    }
}

extension RequestError: JSONMemberFailure {
    /// A member's problem as `invalid_request`, echoing the request's id when it was read.
    init(member: String, problem: JSONMemberProblem, context id: RequestID?) {
        switch problem {
        case .missing: self.init(.invalidRequest, "missing member \"\(member)\"", id: id)
        case .wrongType(_, .number) where member == "id": self.init(.invalidRequest, "\"id\" must be a string or an integer within 64 bits", id: id)
        case .wrongType(_, let found) where member == "id": self.init(.invalidRequest, "\"id\" must be a string or an integer, not \(found.typeName)", id: id)
        case .wrongType(let expected, let found): self.init(.invalidRequest, "\"\(member)\" must be \(expected), not \(found.typeName)", id: id)
        case .invalid(let message): self.init(.invalidRequest, message, id: id)
        }
    }
}
