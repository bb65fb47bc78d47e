/// One parameter of a message (`params` on the wire): a number or a string. `Codable` only
/// for the engine's stored state (`MessageRef`); its wire form is `ServerEvent`'s codec.
public enum MessageParameter: Sendable, Equatable, Hashable, Codable {
    case integer(Int)
    case string(String)

    /// The value as it is substituted into a message text.
    public var text: String {
        switch self {
        case .integer(let value): String(value)
        case .string(let value): value
        }
    }
}

/// A user-visible message: its stable id (`messageId`), its parameters (`params`) and the
/// text rendered in the session's locale (`message`). Clients that translate themselves use
/// the id and parameters; the others show the text.
public struct LocalizedMessage: Sendable, Equatable, Hashable {
    /// Stable id, e.g. `username.too_long`. Empty for a field with no value.
    public var id: String
    /// Parameters by name, in the order they are sent.
    public var params: [Parameter]
    /// The text in the session's locale.
    public var text: String

    public struct Parameter: Sendable, Equatable, Hashable, Codable {
        public var name: String
        public var value: MessageParameter

        public init(_ name: String, _ value: MessageParameter) {
            self.name = name
            self.value = value
        }
    }

    public init(id: String, params: [Parameter] = [], text: String) {
        self.id = id
        self.params = params
        self.text = text
    }

    /// The message of an empty field.
    public static let empty = LocalizedMessage(id: "", text: "")
}

/// Locale tags as the protocol accepts them (BCP 47 syntax, checked loosely).
public enum LocaleTag {
    /// Whether `tag` is a well-formed language tag: a 2–8 letter language, then subtags of
    /// 1–8 letters or digits separated by `-` (`_` is accepted and read as `-`).
    public static func isWellFormed(_ tag: String) -> Bool {
        let parts = tag.split(separator: "-", omittingEmptySubsequences: false).flatMap { $0.split(separator: "_", omittingEmptySubsequences: false) }
        guard let first = parts.first, (2...8).contains(first.count), first.allSatisfy({ $0.isASCII && $0.isLetter }) else { return false }
        return parts.dropFirst().allSatisfy { part in (1...8).contains(part.count) && part.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) } }
    }
}
