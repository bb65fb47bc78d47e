/// What is wrong with a member.
enum JSONMemberProblem {
    case missing
    /// `expected` as a phrase ("a string"), and what was there instead.
    case wrongType(expected: String, found: JSONValue)
    /// Of the right type but not acceptable, in these words.
    case invalid(String)
}

/// An error a member problem becomes; `context` is what the reader knew (a request's id, an event's name).
protocol JSONMemberFailure: Error {
    associatedtype Context
    init(member: String, problem: JSONMemberProblem, context: Context)
}

/// Typed access to one JSON object's members: the one reader both directions use, a
/// request's (`Request.decode`) and a server event's (`ServerEvent.decode`). What a missing
/// or mistyped member means is `Failure`'s (a type, not a closure: no allocation per request).
struct JSONMembers<Failure: JSONMemberFailure> {
    typealias Problem = JSONMemberProblem

    let object: JSONObject
    let context: Failure.Context
    /// Whether `null` in an optional member means absent (requests: `"session": null` is the
    /// default session) rather than a wrong type.
    var nullIsAbsent = false

    func failure(_ member: String, _ problem: Problem) -> Failure {
        Failure(member: member, problem: problem, context: context)
    }

    func optional<T>(_ key: String, _ expected: String, _ convert: (JSONValue) -> T?) throws(Failure) -> T? {
        guard let value = object[key] else { return nil }
        if nullIsAbsent, case .null = value { return nil }
        guard let converted = convert(value) else { throw failure(key, .wrongType(expected: expected, found: value)) }
        return converted
    }

    func required<T>(_ key: String, _ expected: String, _ convert: (JSONValue) -> T?) throws(Failure) -> T {
        guard let value = object[key] else { throw failure(key, .missing) }
        guard let converted = convert(value) else { throw failure(key, .wrongType(expected: expected, found: value)) }
        return converted
    }

    func optionalString(_ key: String) throws(Failure) -> String? { try optional(key, "a string") { $0.stringValue } }
    func string(_ key: String) throws(Failure) -> String { try required(key, "a string") { $0.stringValue } }
    func optionalInt(_ key: String) throws(Failure) -> Int? { try optional(key, "an integer") { $0.int64Value.flatMap { Int(exactly: $0) } } }
    func int(_ key: String) throws(Failure) -> Int { try required(key, "an integer") { $0.int64Value.flatMap { Int(exactly: $0) } } }
    func optionalBool(_ key: String) throws(Failure) -> Bool? { try optional(key, "a boolean") { $0.boolValue } }
    func bool(_ key: String) throws(Failure) -> Bool { try required(key, "a boolean") { $0.boolValue } }
    func optionalObject(_ key: String) throws(Failure) -> JSONObject? { try optional(key, "an object") { $0.objectValue } }
    func object(_ key: String) throws(Failure) -> JSONObject { try required(key, "an object") { $0.objectValue } }
    func objects(_ key: String) throws(Failure) -> [JSONObject] { try required(key, "an array of objects") { $0.arrayValue?.compactMap(\.objectValue) } }
    func strings(_ key: String) throws(Failure) -> [String] { try required(key, "an array of strings") { $0.arrayValue?.compactMap(\.stringValue) } }
    func optionalStrings(_ key: String) throws(Failure) -> [String]? { try optional(key, "an array of strings") { $0.arrayValue?.compactMap(\.stringValue) } }

    /// The request id (`id`): a string, or an integer within 64 bits.
    func requestID() throws(Failure) -> RequestID? {
        try optional("id", "a string or an integer within 64 bits", RequestID.init(json:))
    }
}

extension RequestID {
    /// The id a JSON value names: a string, or an integer within 64 bits.
    public init?(json value: JSONValue) {
        switch value {
        case .string(let text): self = .string(text)
        case .number(let text):
            guard let integer = Int64(text) else { return nil }
            self = .integer(integer)
        default: return nil
        }
    }
}
