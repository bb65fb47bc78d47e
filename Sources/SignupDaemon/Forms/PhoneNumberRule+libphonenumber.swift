import CPhoneLibrary
import FormEngine

/// libsignupd-phone.so: Google's libphonenumber (Debian's libphonenumber8) behind signupd's C
/// shim, opened when a number is first checked or by the warm-up after start, not loaded by
/// every start: libphonenumber, protobuf and abseil, a dozen libraries, cost each start
/// 2.5 ms before `main` (issue 29, the cold start).
enum PhoneLibrary {
    /// Where the library is; a start without it is refused. Opens nothing.
    static func locate() throws(DaemonError) -> String {
        var path = [CChar](repeating: 0, count: 4_608)
        let found = signupd_phone_library_locate(&path, path.count) != 0
        let text = String(decoding: path.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        guard found else { throw .startup(text) }
        return text
    }

    /// Opens the library (once for the process); nil and why when it cannot be.
    static func open() -> (functions: signupd_phone_functions?, failure: String?) {
        var why: UnsafePointer<CChar>?
        guard let functions = signupd_phone_library_open(&why) else {
            return (nil, why.map { String(cString: $0) } ?? "cannot open libsignupd-phone.so")
        }
        return (functions.pointee, nil)
    }
}

extension PhoneNumberRule {
    /// Google's libphonenumber (Debian's libphonenumber8): the number parsed with the form's
    /// default region, checked against its country's numbering plan as a possible and valid
    /// mobile or fixed-line number, its identity the E.164 form.
    static let libphonenumber = PhoneNumberRule { text, region in
        // The start found the library; one that still cannot be opened (damaged, or
        // libphonenumber8 removed) was logged, critical, by the warm-up after start
        // (SignupServer.run), and every number is refused, as libpwquality's failure refuses
        // every password: no keystroke stops the daemon for everyone.
        guard let phone = PhoneLibrary.open().functions else { return PhoneVerdict(.impossible, nationalDigits: nil, inRegion: false) }
        var e164 = [CChar](repeating: 0, count: 32)
        var nationalDigits: Int32 = -1
        var inRegion: Int32 = 0
        let status = phone.parse(text, region ?? "ZZ", &e164, e164.count, &nationalDigits, &inRegion)
        let verdict: PhoneVerdict.Status = switch status {
        case SIGNUPD_PHONE_OK: .valid(e164: String(decoding: e164.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        case SIGNUPD_PHONE_TOO_SHORT: .tooShort
        case SIGNUPD_PHONE_TOO_LONG: .tooLong
        case SIGNUPD_PHONE_INVALID_COUNTRY: .invalidCountry
        case SIGNUPD_PHONE_IMPOSSIBLE: .impossible
        case SIGNUPD_PHONE_WRONG_TYPE: .wrongType
        default: .notANumber
        }
        return PhoneVerdict(verdict, nationalDigits: nationalDigits >= 0 ? Int(nationalDigits) : nil, inRegion: inRegion != 0)
    }

    /// Whether libphonenumber knows `region` (ISO 3166 alpha-2).
    static func isKnownRegion(_ region: String) -> Bool {
        PhoneLibrary.open().functions.map { $0.region_is_known(region) != 0 } ?? false
    }
}

/// Phone numbers as account identities: `tel:` and the E.164 form, whatever way the number
/// was written.
enum PhoneIdentity {
    /// The region read into numbers stored before identities were E.164 (`tel:` and the
    /// digits as typed): the built-in phone forms' region.
    static let legacyRegion = "CN"

    /// The stored identity (`tel:+8613800138000`) of a number typed in a form.
    static func stored(_ value: String, region: String?) -> String? {
        PhoneNumberRule.libphonenumber.identity(of: value, region: region).map { "tel:" + $0 }
    }

    /// The key a number typed as `value` had before identities were E.164: `tel:` and its
    /// digits (a `+` dropped, `00` kept).
    static func legacyKey(_ value: String) -> String {
        "tel:" + PhoneNumberText.digits(PhoneNumberText.ascii(value) ?? "")
    }

    /// The E.164 identity of an account stored as `tel:DIGITS` before: the digits read as a
    /// number of `legacyRegion`, else as international (`+DIGITS`, `00` being the
    /// international prefix); nil when neither is a valid number (the account keeps its
    /// old key and still logs in with exactly those digits).
    static func migrated(_ stored: String) -> String? {
        guard stored.hasPrefix("tel:"), !stored.hasPrefix("tel:+") else { return nil }
        let digits = String(stored.dropFirst(4))
        for candidate in [digits, "+" + digits] {
            if let e164 = PhoneNumberRule.libphonenumber.identity(of: candidate, region: legacyRegion) { return "tel:" + e164 }
        }
        return nil
    }
}
