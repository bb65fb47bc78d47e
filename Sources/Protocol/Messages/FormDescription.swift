/// What a generic client needs to render a form: its fields, in order, and labels.
public struct FormDescription: Sendable, Equatable {
    /// One input of a form.
    public struct Field: Sendable, Equatable {
        public var name: String
        /// A secret field is masked by clients and never echoed by the server.
        public var secret: Bool
        /// A human label, in the requested locale (`describe`'s `locale`, else English).
        public var label: String
        /// The rules the server validates the value with, precise enough to pre-check it.
        public var rules: FieldRulesDescription?
        /// What the value is: "text", "secret", "username", "phone", "email" (a hint for input methods).
        public var kind: String?

        public init(name: String, secret: Bool, label: String, rules: FieldRulesDescription? = nil, kind: String? = nil) {
            self.name = name
            self.secret = secret
            self.label = label
            self.rules = rules
            self.kind = kind
        }
    }

    public var name: String
    public var fields: [Field]
    /// The label of the form's submit button.
    public var submitLabel: String
    /// A human title of the form, in the requested locale.
    public var title: String?
    /// What submit does: "signup" or "login".
    public var action: String?

    public init(name: String, fields: [Field], submitLabel: String, title: String? = nil, action: String? = nil) {
        self.name = name
        self.fields = fields
        self.submitLabel = submitLabel
        self.title = title
        self.action = action
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

/// A field's validation rules as `describe` states them. Absent members do not apply.
public struct FieldRulesDescription: Sendable, Equatable {
    /// Fewest grapheme clusters (extended, UAX #29) of a value that is not empty.
    public var minCharacters: Int?
    /// Most grapheme clusters of each form in `appliesTo` (of the value as sent without it).
    public var maxCharacters: Int?
    /// Most bytes of UTF-8 of each form in `appliesTo` (of the value as sent without it).
    public var maxBytes: Int?
    /// Most bytes of UTF-8 of the value as sent, before normalisation.
    public var maxInputBytes: Int?
    /// The form the value is normalised to before the rules apply and for display: "NFC".
    public var normalization: String?
    /// The forms of the value ("NFC", "NFKC_Casefold") that every character and length
    /// rule here applies to, each form on its own.
    public var appliesTo: [String]?
    /// The only Unicode general categories allowed.
    public var allowedCategories: [String]?
    /// Unicode binary properties no code point may have.
    public var refusedProperties: [String]?
    /// Code points refused although their category is allowed ("U+0640").
    public var refusedCodePoints: [String]?
    /// At least one code point must have one of these general categories.
    public var requiredCategories: [String]?
    /// Where combining marks may stand: "after-letter-of-its-script".
    public var combiningMarks: String?
    /// Most combining marks in one grapheme cluster.
    public var maxMarksPerCharacter: Int?
    /// Most code points in one grapheme cluster.
    public var maxCodePointsPerCharacter: Int?
    /// "RFC5893": a value with right-to-left characters passes the RFC 5893 Bidi Rule.
    public var bidiRule: String?
    /// The UTS #39 checks the `identity` form must pass: "highly_restrictive" restriction
    /// level, and no mixed number systems.
    public var scriptRestriction: String?
    /// The identity of a value: two values with the same image are the same user.
    /// "NFKC_Casefold".
    public var identity: String?
    /// "UTS39-similarity-keys": a value sharing a similarity key with an existing user's,
    /// with another identity, is "too similar" (PROTOCOL.md, "Usernames").
    public var confusables: String?
    /// The Unicode version of every property and mapping named here.
    public var unicodeVersion: String?
    /// The value must equal (byte for byte) the value of this field.
    public var equalsField: String?
    /// Phone numbers: fewest and most digits of the national significant number, for a
    /// number of `region` (libphonenumber's numbering plans judge the rest).
    public var minDigits: Int?
    public var maxDigits: Int?
    /// Phone numbers: the default region (ISO 3166 alpha-2) a number without a country
    /// calling code belongs to; absent: numbers must be international (+…).
    public var region: String?
    /// The value must not contain the value of this field (compared case-insensitively).
    public var notContainingField: String?
    /// The value must have the form local@domain.
    public var email: Bool?
    /// The password must pass the server's quality policy: "libpwquality" (the system's
    /// /etc/security/pwquality.conf, with dictionary checks).
    public var passwordQuality: String?

    public init(
        minCharacters: Int? = nil, maxCharacters: Int? = nil, maxBytes: Int? = nil, maxInputBytes: Int? = nil, normalization: String? = nil,
        appliesTo: [String]? = nil, allowedCategories: [String]? = nil, refusedProperties: [String]? = nil,
        refusedCodePoints: [String]? = nil, requiredCategories: [String]? = nil, combiningMarks: String? = nil,
        maxMarksPerCharacter: Int? = nil, maxCodePointsPerCharacter: Int? = nil, bidiRule: String? = nil, scriptRestriction: String? = nil,
        identity: String? = nil, confusables: String? = nil, unicodeVersion: String? = nil, equalsField: String? = nil
    ) {
        self.minCharacters = minCharacters
        self.maxCharacters = maxCharacters
        self.maxBytes = maxBytes
        self.maxInputBytes = maxInputBytes
        self.normalization = normalization
        self.appliesTo = appliesTo
        self.allowedCategories = allowedCategories
        self.refusedProperties = refusedProperties
        self.refusedCodePoints = refusedCodePoints
        self.requiredCategories = requiredCategories
        self.combiningMarks = combiningMarks
        self.maxMarksPerCharacter = maxMarksPerCharacter
        self.maxCodePointsPerCharacter = maxCodePointsPerCharacter
        self.bidiRule = bidiRule
        self.scriptRestriction = scriptRestriction
        self.identity = identity
        self.confusables = confusables
        self.unicodeVersion = unicodeVersion
        self.equalsField = equalsField
    }
}
