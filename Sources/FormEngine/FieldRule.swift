import SignupProtocol

/// How one field is validated: each case is one rule an operator can write in a form file
/// (`FormFile` names them).
public enum FieldRule: Sendable, Codable, Equatable {
    /// At least this many grapheme clusters (extended, UAX #29).
    case minLength(Int)
    /// At most this many grapheme clusters; counting stops early.
    case maxLength(Int)
    /// At most this many bytes of UTF-8.
    case maxBytes(Int)
    /// Every code point is in one of these classes.
    case characters([CharacterClass])
    /// The configured `FormConfiguration.usernameRule` (the identity rule of usernames).
    case username
    /// A phone number as people write it (`PhoneNumberText`), judged by the configured
    /// `FormConfiguration.phoneNumbers` with `region` as the default country (nil: numbers
    /// must be international); `minDigits`/`maxDigits` bound its national significant
    /// number when it is a number of that region.
    case phone(minDigits: Int, maxDigits: Int, region: String? = nil)
    /// An e-mail address: local@domain, the domain with a dot.
    case email
    /// Must equal (byte for byte) the value of another field.
    case equals(field: String)
    /// Must not contain the value of another field (case-insensitively).
    case notContaining(field: String)
    /// The configured password-quality check (`FormConfiguration.passwordQuality`: the
    /// daemon's is libpwquality with the system's policy), told the value of `userField`
    /// so that it can refuse a password built from the user's name.
    case passwordQuality(userField: String?)
    /// A value that passes every other rule is then checked for availability (store, and
    /// the HTTP service for usernames).
    case available
}

extension FieldRule {
    /// The other field whose value this rule reads, if any.
    var otherField: String? {
        switch self {
        case .equals(let field), .notContaining(let field): field
        case .passwordQuality(let field): field
        default: nil
        }
    }
}

/// Classes of `FieldRule.characters`.
public enum CharacterClass: String, Sendable, Codable, CaseIterable {
    /// General category L*.
    case letters
    /// General category Nd.
    case digits
    /// ASCII letters and digits only.
    case ascii
    /// Space separators (Zs).
    case space
    /// Punctuation and symbols (P*, S*).
    case punctuation

    func contains(_ scalar: Unicode.Scalar) -> Bool {
        switch self {
        case .ascii: return scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar))
        case .letters, .digits, .space, .punctuation:
            switch (self, scalar.properties.generalCategory) {
            case (.letters, .uppercaseLetter), (.letters, .lowercaseLetter), (.letters, .titlecaseLetter), (.letters, .modifierLetter), (.letters, .otherLetter): return true
            case (.digits, .decimalNumber): return true
            case (.space, .spaceSeparator): return true
            case (.punctuation, .connectorPunctuation), (.punctuation, .dashPunctuation), (.punctuation, .openPunctuation),
                (.punctuation, .closePunctuation), (.punctuation, .initialPunctuation), (.punctuation, .finalPunctuation),
                (.punctuation, .otherPunctuation), (.punctuation, .mathSymbol), (.punctuation, .currencySymbol),
                (.punctuation, .modifierSymbol), (.punctuation, .otherSymbol):
                return true
            default: return false
            }
        }
    }

    /// The Unicode general categories of the class, for `describe`.
    var categories: [String] {
        switch self {
        case .letters: ["Lu", "Ll", "Lt", "Lm", "Lo"]
        case .digits: ["Nd"]
        case .ascii: ["ASCII-alphanumeric"]
        case .space: ["Zs"]
        case .punctuation: ["Pc", "Pd", "Ps", "Pe", "Pi", "Pf", "Po", "Sm", "Sc", "Sk", "So"]
        }
    }
}
