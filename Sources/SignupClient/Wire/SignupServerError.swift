import SignupProtocol

/// An `error` event from signupd: its stable code, its human text and what it concerns.
///
/// A code this library does not know (a newer daemon's) is kept as ``Code/unknown(_:)``
/// rather than failing the read.
public struct SignupServerError: Error, Sendable, Equatable {
    /// An error code: one of protocol v1's, or one a newer daemon added.
    public enum Code: Sendable, Hashable {
        /// A code of protocol v1.
        case known(ErrorCode)
        /// A code this library does not know (a newer daemon's), as sent.
        case unknown(String)

        /// The code as sent on the wire, e.g. `not_ready`.
        public var rawValue: String {
            switch self {
            case .known(let code): code.rawValue
            case .unknown(let code): code
            }
        }

        /// The code if this library knows it.
        public var known: ErrorCode? {
            if case .known(let code) = self { code } else { nil }
        }
    }

    /// The stable code (`error.code`).
    public var code: Code
    /// The daemon's text for humans (`error.message`); it may change between versions.
    public var message: String
    /// The session it concerns, when it names one.
    public var session: String?
    /// The request it answers, when it answers one.
    public var id: RequestID?

    /// An error as the daemon would send it.
    public init(code: Code, message: String, session: String? = nil, id: RequestID? = nil) {
        self.code = code
        self.message = message
        self.session = session
        self.id = id
    }

    /// The error an event stands for: an `error` with a known code, or an unknown event
    /// named `error` (a code this library does not know); nil for anything else.
    public init?(_ event: ServerEvent) {
        switch event {
        case .error(let code, let message, let session, let id):
            self.init(code: .known(code), message: message, session: session, id: id)
        case .unknown(let unknown):
            guard let code = unknown.errorCode else { return nil }
            self.init(code: .unknown(code), message: unknown.message ?? "", session: unknown.session, id: unknown.id)
        default:
            return nil
        }
    }
}
