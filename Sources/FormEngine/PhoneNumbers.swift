/// Phone numbers as people type them, and the rule that judges one.

/// A phone number's text reduced to what a numbering-plan parser reads: every Unicode
/// decimal digit (full-width `１`, Arabic-Indic `١`, …) as its ASCII digit, and the
/// punctuation people write numbers with — spaces, dashes, dots, round or square brackets
/// and a `+`, in their ASCII and full-width forms — as ASCII; invisible format characters
/// (a pasted number's bidi marks, a byte-order mark) are dropped. Anything else (a
/// letter, an emoji) makes the text no phone number.
public enum PhoneNumberText {
    /// The ASCII form of `value`, or nil when it holds anything but digits and the
    /// punctuation above.
    public static func ascii(_ value: String) -> String? {
        var text = ""
        text.unicodeScalars.reserveCapacity(value.unicodeScalars.count)
        for scalar in value.unicodeScalars {
            if let digit = decimalDigit(scalar) {
                text.unicodeScalars.append(Unicode.Scalar(UInt8(ascii: "0") + digit))
                continue
            }
            switch scalar {
            case "+", "\u{FF0B}": text.append("+")
            case "(", "[", "\u{FF08}", "\u{FF3B}": text.append("(")
            case ")", "]", "\u{FF09}", "\u{FF3D}": text.append(")")
            case ".", "\u{FF0E}": text.append(".")
            case "-", "\u{2010}", "\u{2011}", "\u{2012}", "\u{2013}", "\u{2014}", "\u{2015}", "\u{2212}", "\u{FF0D}": text.append("-")
            case _ where scalar.properties.isWhitespace: text.append(" ")
            // Invisible format characters a pasted number carries (bidi marks and embeddings
            // from a contacts app, a byte-order mark, zero-width spaces, soft hyphens).
            case _ where scalar.properties.generalCategory == .format: continue
            default: return nil
            }
        }
        return text
    }

    /// The value of a decimal digit of any script (general category Nd).
    static func decimalDigit(_ scalar: Unicode.Scalar) -> UInt8? {
        guard scalar.properties.generalCategory == .decimalNumber, let value = scalar.properties.numericValue,
            value >= 0, value <= 9, value == value.rounded()
        else { return nil }
        return UInt8(value)
    }

    /// The ASCII digits of `text`.
    public static func digits(_ text: String) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.filter { ("0"..."9").contains($0) }))
    }
}

/// What a numbering-plan parser says of a phone number.
public struct PhoneVerdict: Sendable, Equatable {
    public enum Status: Sendable, Equatable {
        /// A number that can exist, of a mobile or fixed line: `e164` is its identity.
        case valid(e164: String)
        /// Too few or too many digits for any number of its country.
        case tooShort, tooLong
        /// A country calling code that does not exist (or no region and no `+`).
        case invalidCountry
        /// Digits no number of its country has.
        case impossible
        /// A number that exists but is neither mobile nor fixed (toll-free, premium rate…).
        case wrongType
        /// Not a number at all.
        case notANumber
        /// The parser cannot judge any number now (the daemon's numbering-plan library is
        /// missing or refused): a fault of the server, not of what was typed.
        case unavailable
    }

    public var status: Status
    /// The national significant number's length, once the parser could read one.
    public var nationalDigits: Int?
    /// Whether the number belongs to the rule's region (its country calling code).
    public var inRegion: Bool
    /// Whether a numbering plan judged the number (false: digits were only counted, and the
    /// form's digit bounds are all there is to say about a valid-looking number).
    public var judgedByPlan: Bool

    public init(_ status: Status, nationalDigits: Int? = nil, inRegion: Bool = false, judgedByPlan: Bool = true) {
        self.status = status
        self.nationalDigits = nationalDigits
        self.inRegion = inRegion
        self.judgedByPlan = judgedByPlan
    }
}

/// How phone numbers are parsed: the daemon's is Google's libphonenumber; `.basic`, for
/// the engine alone (tests, the fuzzer), counts digits and knows no numbering plan.
public struct PhoneNumberRule: Sendable {
    /// Parses ASCII text (`PhoneNumberText.ascii`) with a default region (ISO 3166 alpha-2;
    /// nil: numbers must be international).
    public let parse: @Sendable (_ text: String, _ region: String?) -> PhoneVerdict

    public init(_ parse: @escaping @Sendable (_ text: String, _ region: String?) -> PhoneVerdict) {
        self.parse = parse
    }

    /// Every number of 1 to 30 digits is valid and national unless it starts with `+` or
    /// the international prefix `00`; its identity is its digits (`+` and them, when
    /// international).
    public static let basic = PhoneNumberRule { text, _ in
        let trimmed = text.drop { $0 == " " || $0 == "(" }
        let international = trimmed.hasPrefix("+") || trimmed.hasPrefix("00")
        var digits = PhoneNumberText.digits(text)
        if trimmed.hasPrefix("00") { digits.removeFirst(2) }
        guard !digits.isEmpty else { return PhoneVerdict(.notANumber, judgedByPlan: false) }
        guard digits.utf8.count <= 30 else { return PhoneVerdict(.tooLong, nationalDigits: digits.utf8.count, inRegion: !international, judgedByPlan: false) }
        return PhoneVerdict(
            .valid(e164: international ? "+" + digits : digits), nationalDigits: digits.utf8.count, inRegion: !international, judgedByPlan: false)
    }

    /// The identity of `value` (as typed) under this rule: its E.164 form, or nil when it
    /// is no valid number.
    public func identity(of value: String, region: String?) -> String? {
        guard value.utf8.count <= PhoneRules.maxInputBytes, let text = PhoneNumberText.ascii(value),
            case .valid(let e164) = parse(text, region).status
        else { return nil }
        return e164
    }
}

public enum PhoneRules {
    /// The longest value the phone rule reads, in bytes as typed (room for a number
    /// written in full-width characters with its punctuation): longer is `invalid`.
    public static let maxInputBytes = 128
}
