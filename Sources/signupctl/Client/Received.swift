import SignupProtocol

/// One line from signupd, decoded once by the protocol's codec: the event, the request it
/// answers and, for an `error`, the refusal. The message as sent is kept only for output
/// that passes the daemon's words on (`--json`, `monitor`).
struct Received {
    let message: JSONObject
    /// Nil for an event this signupctl does not know (a newer daemon's).
    let event: ServerEvent?
    /// An `error` event, also one whose code this signupctl does not know.
    let refusal: Refusal?

    /// An `error` event's code and text.
    struct Refusal: Equatable {
        /// Nil for a code this signupctl does not know (a newer daemon's): `codeText` has it.
        let code: ErrorCode?
        let codeText: String
        let text: String

        init(_ code: ErrorCode, _ text: String) {
            self.code = code
            codeText = code.rawValue
            self.text = text
        }

        init(unknownCode: String, _ text: String) {
            code = ErrorCode(rawValue: unknownCode)
            codeText = unknownCode
            self.text = text
        }
    }

    init(_ message: JSONObject) {
        self.message = message
        switch Result(catching: { () throws(ServerEventDecodingError) in try ServerEvent.decode(message) }) {
        case .success(let event):
            self.event = event
            if case .error(let code, let text, _, _) = event { refusal = Refusal(code, text) } else { refusal = nil }
        case .failure(.unknownErrorCode(let code, let text)):
            event = nil
            refusal = Refusal(unknownCode: code, text)
        case .failure:
            event = nil
            refusal = nil
        }
    }

    /// The request it answers: the event's `id`, or for an event this signupctl cannot
    /// decode, the `id` it carries.
    var id: RequestID? {
        if let event { return event.id }
        return RequestID(json: message["id"])
    }

    /// A field's validation, which a `set` causes besides its direct reply.
    var isValidation: Bool {
        if case .session(_, _, .validation, _)? = event { true } else { false }
    }

    /// A session's `result`.
    var isResult: Bool {
        if case .session(_, _, .result, _)? = event { true } else { false }
    }
}
