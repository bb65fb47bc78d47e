/// What a generic client needs to render a form: its fields, in order, and labels.
public struct FormDescription: Sendable, Equatable, Codable {
    /// One input of a form.
    public struct Field: Sendable, Equatable, Codable {
        public var name: String
        /// A secret field is masked by clients and never echoed by the server.
        public var secret: Bool
        /// A human label, in the server's default language.
        public var label: String

        public init(name: String, secret: Bool, label: String) {
            self.name = name
            self.secret = secret
            self.label = label
        }
    }

    public var name: String
    public var fields: [Field]
    /// The label of the form's submit button.
    public var submitLabel: String

    public init(name: String, fields: [Field], submitLabel: String) {
        self.name = name
        self.fields = fields
        self.submitLabel = submitLabel
    }
}

/// The limits a server announces in its `hello`.
public struct ServerLimits: Sendable, Equatable {
    public var maxLineBytes: Int
    public var maxSessionsPerConnection: Int
    public var maxOutputBytes: Int

    public init(maxLineBytes: Int = 65536, maxSessionsPerConnection: Int = 16, maxOutputBytes: Int = 1 << 20) {
        self.maxLineBytes = maxLineBytes
        self.maxSessionsPerConnection = maxSessionsPerConnection
        self.maxOutputBytes = maxOutputBytes
    }
}
