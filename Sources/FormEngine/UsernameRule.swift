import SignupProtocol

/// The syntactic username rules the engine itself knows: the daemon applies the full
/// rule (normalisation, invisible characters, UTS #39) through `FormConfiguration.usernameRule`;
/// `UsernameRule.basic` is the ICU-free approximation used where none is configured.
public enum UsernameRules {
    public static let maxLength = 39
    /// Most bytes of UTF-8 in a (normalised) username.
    public static let maxBytes = 255
    /// Most bytes of UTF-8 of a username as sent, before normalisation.
    public static let maxInputBytes = 4 * maxBytes
    /// Most combining marks (Mn Mc) in one grapheme cluster of a username.
    public static let maxMarksPerCharacter = 4
    /// Most code points in one grapheme cluster of a username.
    public static let maxCodePointsPerCharacter = 8

    /// Whether every scalar is a letter (general category L*) or a decimal digit (Nd).
    public static func hasOnlyLettersAndDigits(_ value: String) -> Bool {
        value.unicodeScalars.allSatisfy { CharacterClass.letters.contains($0) || CharacterClass.digits.contains($0) }
    }
}

/// Why a username fails the character and length rule.
public enum UsernameVerdict: Sendable, Equatable {
    case valid
    case invalidCharacters
    case invisibleCharacters
    case tooLong
    case tooManyBytes
    case mixedScripts
    /// Only modifier letters (ʼ ๆ), no other letter or digit.
    case noLetter
    /// A grapheme cluster with too many combining marks or code points.
    case overloadedCharacter
    /// Right-to-left text in an order the RFC 5893 Bidi Rule refuses.
    case bidiOrder
}

/// The username character and length rule a form applies.
public struct UsernameRule: Sendable {
    public let check: @Sendable (String) -> UsernameVerdict

    public init(_ check: @escaping @Sendable (String) -> UsernameVerdict) {
        self.check = check
    }

    /// Without ICU: bytes as typed, no default-ignorable code points, letters and digits,
    /// at most `UsernameRules.maxLength` grapheme clusters. No normalisation.
    /// Also without marks: no U+0640 ARABIC TATWEEL, a letter other than a modifier letter
    /// or a digit, at most `UsernameRules.maxCodePointsPerCharacter` code points a character.
    public static let basic = UsernameRule { value in
        guard value.utf8.count <= UsernameRules.maxBytes else { return .tooManyBytes }
        guard !value.unicodeScalars.contains(where: { $0.properties.isDefaultIgnorableCodePoint }) else { return .invisibleCharacters }
        guard UsernameRules.hasOnlyLettersAndDigits(value), !value.unicodeScalars.contains("\u{0640}") else { return .invalidCharacters }
        guard value.unicodeScalars.contains(where: { $0.properties.generalCategory != .modifierLetter }) else { return .noLetter }
        guard value.allSatisfy({ $0.unicodeScalars.count <= UsernameRules.maxCodePointsPerCharacter }) else { return .overloadedCharacter }
        guard value.count <= UsernameRules.maxLength else { return .tooLong }
        return .valid
    }
}
