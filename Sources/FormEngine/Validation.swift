import SignupProtocol

/// A message the engine produces, by id and parameters; rendered in the session's locale.
public struct MessageRef: Sendable, Codable, Equatable, Hashable {
    public var id: String
    public var params: [LocalizedMessage.Parameter]

    public init(_ id: String, _ params: [LocalizedMessage.Parameter] = []) {
        self.id = id
        self.params = params
    }

    public static let empty = MessageRef("")
}

/// A field's validation state and message, as the wire shows it.
public struct Validation: Sendable, Codable, Equatable {
    public var state: ValidationState
    public var message: MessageRef

    public init(_ state: ValidationState, _ message: MessageRef) {
        self.state = state
        self.message = message
    }

    public static let empty = Validation(.empty, .empty)
}
