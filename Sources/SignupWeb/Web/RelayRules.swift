import SignupProtocol

/// What the WebSocket relay does with each message, as pure functions: which requests a
/// browser may send, how their ids are kept apart from the bridge's own, and what of
/// signupd's answers a page may see.
enum RelayRules {
    /// The operations a page may use. `client` is the bridge's (it names the person);
    /// `attach`, `sessions`, `verify` and `logout` are not for page script (the login token
    /// lives in an `HttpOnly` cookie: `/whoami`, `POST /logout`).
    static let browserOperations: Set<String> = ["describe", "open", "resume", "set", "submit", "locale", "snapshot", "close", "ping"]

    enum Decision: Equatable {
        /// Send this line to signupd.
        case forward(JSONObject)
        /// Answer the page with this, send nothing.
        case answer(JSONObject)
    }

    /// A text frame from the page. Its id is wrapped (`"w"` and the id's JSON) so that it
    /// never meets an id of the bridge's own requests, and the line is written anew, so that
    /// a frame cannot smuggle a second line.
    static func fromBrowser(_ frame: [UInt8]) -> Decision {
        let object: JSONObject
        do {
            guard let parsed = try JSONParser.parse(frame).objectValue else {
                return .answer(error("invalid_request", "a request is a JSON object", id: nil))
            }
            object = parsed
        } catch {
            return .answer(self.error("invalid_json", error.message, id: nil))
        }
        let id = object["id"]
        guard let op = object["op"]?.stringValue else { return .answer(error("invalid_request", "missing \"op\"", id: id)) }
        guard browserOperations.contains(op) else {
            return .answer(error("forbidden", "op \"\(op)\" is not available through signupd-web", id: id))
        }
        var members = object.members.filter { $0.key != "id" }
        if let id {
            var writer = JSONWriter()
            writer.value(id)
            members.append(.init(key: "id", value: .string("w" + String(decoding: writer.bytes, as: UTF8.self))))
        }
        return .forward(JSONObject(members))
    }

    /// A forwarded line as signupd will take it: one longer than signupd's limit (the id the
    /// bridge wraps adds a few bytes) is answered as signupd would, `line_too_long`.
    static func fitting(_ line: JSONObject, maxLineBytes: Int) -> Decision {
        var writer = JSONWriter()
        writer.value(.object(line))
        guard writer.byteCount > maxLineBytes else { return .forward(line) }
        let id: JSONValue? = line["id"].flatMap { wrapped in
            wrapped.stringValue.flatMap { try? JSONParser.parse(Array($0.utf8.dropFirst())) }
        }
        return .answer(error("line_too_long", "line longer than \(maxLineBytes) bytes; discarded", id: id))
    }

    /// A line from signupd, as the page sees it: its id unwrapped, or nil for a reply to the
    /// bridge's own request (which the page did not make).
    static func toBrowser(_ message: JSONObject) -> JSONObject? {
        guard let index = message.members.firstIndex(where: { $0.key == "id" }) else { return message }
        guard let wrapped = message.members[index].value.stringValue, wrapped.hasPrefix("w"),
            let id = try? JSONParser.parse(Array(wrapped.utf8.dropFirst()))
        else { return nil }
        var members = message.members
        members[index].value = id
        return JSONObject(members)
    }

    /// A login's `result` with its token replaced: `claim` (for `POST /session`) instead.
    static func withClaim(_ message: JSONObject, claim: String?) -> JSONObject {
        var members = message.members.filter { $0.key != "token" }
        if let claim { members.append(.init(key: "claim", value: .string(claim))) }
        return JSONObject(members)
    }

    static func error(_ code: String, _ message: String, id: JSONValue?) -> JSONObject {
        var members: [JSONObject.Member] = [.init(key: "event", value: .string("error")), .init(key: "code", value: .string(code)), .init(key: "message", value: .string(message))]
        if let id { members.append(.init(key: "id", value: id)) }
        return JSONObject(members)
    }

    static func text(_ object: JSONObject) -> String {
        var writer = JSONWriter()
        writer.value(.object(object))
        return String(decoding: writer.bytes, as: UTF8.self)
    }
}
