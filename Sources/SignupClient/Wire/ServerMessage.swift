import SignupProtocol

/// One line from signupd, decoded once: the event, and its members as sent (for output that
/// passes the daemon's words on, such as a monitor's JSON).
///
/// Decoding never fails for something new: an event or error code this library does not
/// know, and a known event whose members it cannot read, are ``SignupProtocol/ServerEvent/unknown(_:)``.
public struct ServerMessage: Sendable, Equatable {
    /// The members as sent, in order.
    public let members: JSONObject
    /// The decoded event.
    public let event: ServerEvent

    /// Decodes a parsed line.
    public init(_ members: JSONObject) {
        self.members = members
        event = (try? ServerEvent.decode(members)) ?? .unknown(UnknownServerEvent(event: members["event"]?.stringValue ?? "", members: members))
    }

    /// Decodes a line without its newline; nil when it is not a JSON object.
    public init?(line: some Collection<UInt8>) {
        guard let object = try? JSONParser.parse(Array(line)).objectValue else { return nil }
        self.init(object)
    }

    /// The request it answers (its `id`), if any.
    public var id: RequestID? { event.id }

    /// For an `error` event, also one with a code this library does not know: the error.
    public var refusal: SignupServerError? { SignupServerError(event) }

    /// A field's validation, which a `set` (or `open`'s snapshot) causes besides its reply.
    public var isValidation: Bool {
        if case .session(_, _, .validation, _) = event { true } else { false }
    }

    /// A session's `result`.
    public var isResult: Bool {
        if case .session(_, _, .result, _) = event { true } else { false }
    }

    /// Whether this is the reply to request `id`: the first message carrying the id that is
    /// not one of the validations the request caused, nor (unless `unknownEvents`, for an
    /// operation this library has no case for) an event this library cannot read — an
    /// `error` with a new code always is one.
    public func answers(_ id: RequestID, unknownEvents: Bool = false) -> Bool {
        guard self.id == id, !isValidation else { return false }
        return unknownEvents || !event.isUnknown || refusal != nil
    }
}
