import CICU

/// Who a username is. Every place that asks "is this the same user" — the availability
/// check, every account store, login, `verify`, the login limiter — compares these keys,
/// never the strings as typed.
///
/// - `display`: the name as the user typed it, in NFC. Stored and shown (`result`, `verified`).
/// - `key`: NFKC_Casefold (Unicode's NFKC_CF) of the name. Two names with the same key are
///   the same account: canonical and compatibility equivalents (한국 precomposed or as jamo,
///   Å U+212B and U+00C5, ﬁ and fi, ａｌｉｃｅ and alice) and full case folding (ß and ss,
///   ς and σ, K and k).
/// - `skeleton`: the UTS #39 confusable skeleton of `key`. A name whose skeleton is that of
///   an existing account but whose key is not is "too similar" (аре and ape, rn and m).
/// - `legacyKey`: what the first schema used as the key (`lowercased()` of the bytes as
///   typed). Only to tell apart accounts created before keys were normalised that now share
///   a key.
///
/// All from ICU (`Usernames.icuVersion`), whose Unicode version is `Usernames.unicodeVersion`.
public struct UsernameIdentity: Sendable, Hashable {
    public let display: String
    public let key: String
    public let skeleton: String
    public let legacyKey: String

    public init(display: String, key: String, skeleton: String, legacyKey: String) {
        self.display = display
        self.key = key
        self.skeleton = skeleton
        self.legacyKey = legacyKey
    }
}

/// Why a name cannot be a username. The rule is applied to the normalised name.
public enum UsernameRejection: Error, Sendable, Equatable {
    /// A code point that is not a letter (Lu Ll Lt Lm Lo) or decimal digit (Nd) in the
    /// name (NFC), or not a letter, digit or combining mark in its NFKC_Casefold key.
    case invalidCharacters
    /// A Default_Ignorable_Code_Point (Hangul fillers, zero-width characters, bidi
    /// controls, variation selectors, soft hyphen, ...).
    case invisibleCharacters
    /// More than `Usernames.maxCharacters` grapheme clusters (NFC or key).
    case tooLong
    /// More than `Usernames.maxBytes` bytes of UTF-8 (NFC or key).
    case tooManyBytes
    /// Mixes scripts beyond UTS #39's "highly restrictive" level, or mixes number systems.
    case mixedScripts
    /// ICU failed (out of memory); the name is not accepted.
    case unavailable
}

/// The username rule and identity function, in one place.
public enum Usernames {
    /// Most grapheme clusters in a username (NFC and NFKC_Casefold forms both).
    public static let maxCharacters = 39
    /// Most bytes of UTF-8 in a username (NFC and NFKC_Casefold forms both).
    public static let maxBytes = 255
    /// Input longer than this is refused as `tooManyBytes` before it is normalised: NFC
    /// shrinks text at most threefold, so such input can never fit in `maxBytes`.
    public static let maxInputBytes = 4 * maxBytes

    /// The Unicode version the keys are computed with (the linked ICU's).
    public static let unicodeVersion = ICU.version(signupd_unicode_version)
    /// The linked ICU's version.
    public static let icuVersion = ICU.version(signupd_icu_version)
    /// Names the key algorithm and its Unicode version; stored with the keys so that a
    /// daemon linked against another ICU recomputes them.
    public static var keyVersion: String { "NFKC_Casefold+UTS39-skeleton/Unicode-\(unicodeVersion)" }

    /// Applies the username rule (PROTOCOL.md, "Usernames", in the same order) and returns
    /// the name's identity.
    public static func identity(of name: String) -> Result<UsernameIdentity, UsernameRejection> {
        guard name.utf8.count <= maxInputBytes else { return .failure(.tooManyBytes) }
        guard let display = ICU.nfc(name) else { return .failure(.unavailable) }
        guard display.utf8.count <= maxBytes else { return .failure(.tooManyBytes) }
        switch ICU.classify(display) {
        case 0: break
        case 1: return .failure(.invisibleCharacters)
        default: return .failure(.invalidCharacters)
        }
        guard let key = ICU.nfkcCasefold(display) else { return .failure(.unavailable) }
        switch ICU.classify(key, allowMarks: true) {
        case 0: break
        case 1: return .failure(.invisibleCharacters)
        default: return .failure(.invalidCharacters)
        }
        guard !key.isEmpty else { return .failure(.invisibleCharacters) }
        guard key.utf8.count <= maxBytes else { return .failure(.tooManyBytes) }
        guard display.count <= maxCharacters, key.count <= maxCharacters else { return .failure(.tooLong) }
        switch ICU.spoofCheck(key) {
        case 0: break
        case ..<0: return .failure(.unavailable)
        default: return .failure(.mixedScripts)
        }
        guard let skeleton = ICU.skeleton(key) else { return .failure(.unavailable) }
        return .success(UsernameIdentity(display: display, key: key, skeleton: skeleton, legacyKey: name.lowercased()))
    }

    /// The identity of a name stored before the rule existed (schema migration): no rule
    /// is applied, the name is kept as stored. Nil only when ICU fails.
    public static func storedIdentity(of name: String, legacyKey: String) -> UsernameIdentity? {
        guard let key = ICU.nfkcCasefold(name), let skeleton = ICU.skeleton(key) else { return nil }
        return UsernameIdentity(display: name, key: key, skeleton: skeleton, legacyKey: legacyKey)
    }
}
