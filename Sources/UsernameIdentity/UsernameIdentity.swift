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
/// - `similarityKeys`: the name's look-alike keys, for each way the account can be written
///   (`Usernames.similarityKeys(ofForm:)` of the NFC name, its lowercase, its uppercase, the
///   key and the key's uppercase: the UTS #39 key, and the key with `LookAlikes` read as
///   Latin), sorted by bytes, without duplicates. A name one of whose similarity keys is an
///   existing account's, with another key, is "too similar": аре and ape, rn and m, appIe
///   and apple, КАТЕ and KATE, r00t and root, İstanbul and istanbul, bㅣll and bill, ȷoȷo
///   and jojo, ᑭᐤᐤ and poo.
/// - `skeleton`: the UTS #39 similarity key of `key` (`Usernames.similarityKey`); what the login limiter counts attempts by, so
///   that every spelling of one account shares one count (a look-alike that is not an
///   account cannot log in to anyone).
/// - `legacyKey`: what the first schema used as the key (`lowercased()` of the bytes as
///   typed). Only to tell apart accounts created before keys were normalised that now share
///   a key.
///
/// All from ICU (`Usernames.icuVersion`), whose Unicode version is `Usernames.unicodeVersion`.
public struct UsernameIdentity: Sendable, Hashable {
    public let display: String
    public let key: String
    public let similarityKeys: [String]
    public let skeleton: String
    public let legacyKey: String
    // Made only by `Usernames` in this module: the synthesised memberwise initialiser serves.
}

/// Why a name cannot be a username. The rule is applied to the normalised name.
public enum UsernameRejection: Error, Sendable, Equatable {
    /// A code point that is not a letter (Lu Ll Lt Lm Lo), a decimal digit (Nd) or a
    /// combining mark (Mn Mc) after a letter of its script, in the name (NFC) or its key;
    /// or U+0640 ARABIC TATWEEL.
    case invalidCharacters
    /// A Default_Ignorable_Code_Point (Hangul fillers, zero-width characters, bidi
    /// controls, variation selectors, soft hyphen, ...), or the same nonspacing mark twice
    /// on one letter (which shows as one).
    case invisibleCharacters
    /// No letter other than modifier letters (Lu Ll Lt Lo) and no decimal digit: ʼʼ, ๆๆ.
    case noLetter
    /// A grapheme cluster of more than `Usernames.maxMarksPerCharacter` combining marks or
    /// more than `Usernames.maxCodePointsPerCharacter` code points ("zalgo" stacks).
    case overloadedCharacter
    /// Right-to-left characters in an order that fails the RFC 5893 Bidi Rule (123علي).
    case bidiOrder
    /// More than `Usernames.maxCharacters` grapheme clusters (NFC or key).
    case tooLong
    /// More than `Usernames.maxBytes` bytes of UTF-8 (NFC or key), or more than
    /// `Usernames.maxInputBytes` as sent.
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
    /// Most combining marks (Mn Mc) in one grapheme cluster (NFC and key).
    public static let maxMarksPerCharacter = 4
    /// Most code points in one grapheme cluster (NFC and key).
    public static let maxCodePointsPerCharacter = 8

    /// The Unicode version the keys are computed with: that of the ICU signupd was built
    /// against, which the ICU it opens must match (known without opening it).
    public static let unicodeVersion = ICU.version(signupd_unicode_version)
    /// The opened ICU's version ("0.0" if it cannot be opened).
    public static var icuVersion: String { ICU.version(signupd_icu_version) }
    /// The opened ICU's Unicode version ("0.0" if it cannot be opened): `unicodeVersion`
    /// when it can.
    public static var openedUnicodeVersion: String { ICU.version(signupd_icu_unicode_version) }

    /// Opens ICU now, rather than at the first name checked (it is opened at first use, not
    /// at start): nil when usable, else why not. Until it is, every name is refused as
    /// `unavailable`.
    public static func openICU() -> String? {
        signupd_icu_load() == 1 ? nil : String(cString: signupd_icu_error())
    }
    /// Names the key algorithm and its Unicode version; stored with the keys so that a
    /// daemon linked against another ICU recomputes them.
    /// The look-alike table's part (`LookAlikes.version`) changes with any change of the table.
    public static var keyVersion: String { "NFKC_Casefold+UTS39-similarity+look-alikes-\(LookAlikes.version)/Unicode-\(unicodeVersion)" }

    /// Applies the username rule (PROTOCOL.md, "Usernames", in the same order) and returns
    /// the name's identity.
    public static func identity(of name: String) -> Result<UsernameIdentity, UsernameRejection> {
        checked(name, withSimilarityKeys: true)
    }

    /// Applies the username rule only: nil when the name is valid. What the form checks on
    /// every keystroke; the similarity keys are computed when a store is asked.
    public static func rejection(of name: String) -> UsernameRejection? {
        if case .failure(let rejection) = checked(name, withSimilarityKeys: false) { return rejection }
        return nil
    }

    private static func checked(_ name: String, withSimilarityKeys: Bool) -> Result<UsernameIdentity, UsernameRejection> {
        guard name.utf8.count <= maxInputBytes else { return .failure(.tooManyBytes) }
        guard let display = ICU.nfc(name) else { return .failure(.unavailable) }
        guard display.utf8.count <= maxBytes else { return .failure(.tooManyBytes) }
        if let rejection = characterRule(display) { return .failure(rejection) }
        guard let key = ICU.nfkcCasefold(display) else { return .failure(.unavailable) }
        if let rejection = characterRule(key) { return .failure(rejection) }
        guard key.utf8.count <= maxBytes else { return .failure(.tooManyBytes) }
        guard display.count <= maxCharacters, key.count <= maxCharacters else { return .failure(.tooLong) }
        switch ICU.spoofCheck(key) {
        case 0: break
        case ..<0: return .failure(.unavailable)
        // The same nonspacing mark twice on one letter (x + ◌́ + ◌́ shows as xé): invisible,
        // not a mix of scripts (helper-40 was told "mixes scripts").
        case let bits where bits & Int32(SIGNUPD_SPOOF_INVISIBLE) != 0: return .failure(.invisibleCharacters)
        default: return .failure(.mixedScripts)
        }
        guard ICU.passesBidiRule(display), ICU.passesBidiRule(key) else { return .failure(.bidiOrder) }
        guard withSimilarityKeys else {
            return .success(UsernameIdentity(display: display, key: key, similarityKeys: [], skeleton: "", legacyKey: ""))
        }
        guard let similarityKeys = similarityKeys(display: display, key: key), let skeleton = similarityKey(key) else {
            return .failure(.unavailable)
        }
        return .success(
            UsernameIdentity(display: display, key: key, similarityKeys: similarityKeys, skeleton: skeleton, legacyKey: name.lowercased())
        )
    }

    /// The character rule, applied to the NFC name and to its key alike.
    static func characterRule(_ text: String) -> UsernameRejection? {
        switch Int(ICU.classify(text)) {
        case Int(SIGNUPD_CLASS_OK): break
        case Int(SIGNUPD_CLASS_INVISIBLE): return .invisibleCharacters
        case Int(SIGNUPD_CLASS_NO_LETTER): return .noLetter
        default: return .invalidCharacters
        }
        for character in text {
            var codePoints = 0
            var marks = 0
            for scalar in character.unicodeScalars {
                codePoints += 1
                switch scalar.properties.generalCategory {
                case .nonspacingMark, .spacingMark, .enclosingMark: marks += 1
                default: break
                }
            }
            if codePoints > maxCodePointsPerCharacter || marks > maxMarksPerCharacter { return .overloadedCharacter }
        }
        return nil
    }

    /// The UTS #39 look-alike key of one written form: NFKC_Casefold of the UTS #39
    /// skeleton of the form without its general diacritics (script Inherited marks, before
    /// and after the skeleton) and with small capitals as capitals. Nil only when ICU fails.
    public static func similarityKey(_ form: String) -> String? {
        guard let bare = ICU.strippingDiacritics(form) else { return nil }
        return keyOfBare(bare)
    }

    /// The look-alike keys of one written form: its UTS #39 key (`similarityKey`) and, when
    /// the form has look-alikes UTS #39 does not fold (`LookAlikes.table`), the same key of
    /// the form with them read as their Latin letters. Nil only when ICU fails.
    public static func similarityKeys(ofForm form: String) -> [String]? {
        guard let bare = ICU.strippingDiacritics(form), let key = keyOfBare(bare) else { return nil }
        guard let latin = LookAlikes.folded(bare) else { return [key] }
        guard let latinKey = keyOfBare(latin) else { return nil }
        return [key, latinKey]
    }

    /// The similarity key of a form already without its diacritics.
    private static func keyOfBare(_ bare: String) -> String? {
        guard let skeleton = ICU.skeleton(bare), let bareSkeleton = ICU.strippingDiacritics(skeleton) else { return nil }
        return ICU.nfkcCasefold(bareSkeleton)
    }

    /// The similarity keys of every way the account can be written. Nil only when ICU fails.
    static func similarityKeys(display: String, key: String) -> [String]? {
        guard let lower = ICU.lowercased(display), let upper = ICU.uppercased(display), let keyUpper = ICU.uppercased(key) else {
            return nil
        }
        var keys: [[UInt8]: String] = [:]
        for form in [display, lower, upper, key, keyUpper] {
            guard let similarities = similarityKeys(ofForm: form) else { return nil }
            for similarity in similarities { keys[Array(similarity.utf8)] = similarity }
        }
        return keys.sorted { $0.key.lexicographicallyPrecedes($1.key) }.map(\.value)
    }

    /// The identity of a name stored before the rule existed (schema migration): no rule
    /// is applied, the name is kept as stored. Nil only when ICU fails.
    public static func storedIdentity(of name: String, legacyKey: String) -> UsernameIdentity? {
        guard let key = ICU.nfkcCasefold(name), let similarityKeys = similarityKeys(display: name, key: key),
            let skeleton = similarityKey(key)
        else { return nil }
        return UsernameIdentity(display: name, key: key, similarityKeys: similarityKeys, skeleton: skeleton, legacyKey: legacyKey)
    }
}
