import CPWQuality
import FormEngine
import Logging
import NIOConcurrencyHelpers
import SignupProtocol

/// The `password-quality` rule, backed by the system's own policy library: libpwquality
/// with `/etc/security/pwquality.conf` (minlen, minclass, dictcheck, usercheck, …) and
/// cracklib's dictionary. Its verdicts become `password.quality.*` message ids; the
/// password is handed to the library in memory only and never logged.
final class SystemPasswordQuality: @unchecked Sendable {
    /// Read once at start; libpwquality only reads it afterwards, from any thread.
    private let settings: OpaquePointer
    /// The configured minimum length, for the `too_short` message.
    let minimumLength: Int

    /// Nil when the library cannot even allocate its settings. A missing or malformed
    /// configuration file leaves the library's defaults (and is reported by `problem`).
    init?() {
        guard let settings = pwquality_default_settings() else { return nil }
        self.settings = settings
        var aux: UnsafeMutableRawPointer?
        let read = pwquality_read_config(settings, nil, &aux)
        problem = read == 0 ? nil : Self.describe(read)
        var length: Int32 = 0
        _ = pwquality_get_int_value(settings, PWQ_SETTING_MIN_LENGTH, &length)
        minimumLength = Int(length)
        // Without cracklib's dictionary every check would fail as "based on a dictionary
        // word": probe once with a password no dictionary holds, and drop only that check.
        var dictionaryCheck: Int32 = 0
        _ = pwquality_get_int_value(settings, PWQ_SETTING_DICT_CHECK, &dictionaryCheck)
        if dictionaryCheck != 0, pwquality_check(settings, "Qx7#vLp9!wZ2kR", nil, nil, nil) == PWQ_ERROR_CRACKLIB_CHECK {
            _ = pwquality_set_int_value(settings, PWQ_SETTING_DICT_CHECK, 0)
            dictionaryMissing = true
        } else {
            dictionaryMissing = false
        }
    }

    /// Why the configuration file could not be read, if it could not.
    let problem: String?
    /// cracklib's dictionary could not be loaded (install cracklib-runtime): the other
    /// checks still apply.
    let dictionaryMissing: Bool

    deinit { pwquality_free_settings(settings) }

    var check: PasswordQualityCheck {
        PasswordQualityCheck { [self] password, user in
            let code = password.withCString { cPassword in
                user.isEmpty
                    ? pwquality_check(settings, cPassword, nil, nil, nil)
                    : user.withCString { pwquality_check(settings, cPassword, nil, $0, nil) }
            }
            return Self.verdict(code, minimumLength: minimumLength)
        }
    }

    static func verdict(_ code: Int32, minimumLength: Int) -> PasswordQualityFailure? {
        guard code < 0 else { return nil }  // a score of 0…100: accepted
        let verdict: PasswordQualityVerdict
        switch code {
        case PWQ_ERROR_MIN_LENGTH: return PasswordQualityFailure(.tooShort, [.init("min", .integer(minimumLength))])
        case PWQ_ERROR_MIN_CLASSES, PWQ_ERROR_MIN_DIGITS, PWQ_ERROR_MIN_UPPERS, PWQ_ERROR_MIN_LOWERS, PWQ_ERROR_MIN_OTHERS:
            verdict = .tooFewClasses
        case PWQ_ERROR_CRACKLIB_CHECK, PWQ_ERROR_BAD_WORDS: verdict = .dictionary
        case PWQ_ERROR_USER_CHECK, PWQ_ERROR_GECOS_CHECK: verdict = .containsUser
        case PWQ_ERROR_PALINDROME: verdict = .palindrome
        case PWQ_ERROR_MAX_CONSECUTIVE, PWQ_ERROR_MAX_CLASS_REPEAT: verdict = .repeated
        case PWQ_ERROR_MAX_SEQUENCE: verdict = .sequence
        case PWQ_ERROR_TOO_SIMILAR, PWQ_ERROR_CASE_CHANGES_ONLY, PWQ_ERROR_ROTATED, PWQ_ERROR_SAME_PASSWORD: verdict = .tooSimple
        default: verdict = .rejected
        }
        return PasswordQualityFailure(verdict)
    }

    private static func describe(_ code: Int32) -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard let text = pwquality_strerror(&buffer, buffer.count, code, nil) else { return "error \(code)" }
        return String(cString: text)
    }
}

/// libpwquality, set up once, when first needed: what it says about its configuration and
/// dictionary is logged then (at start, by the command's warm-up).
final class DeferredPasswordQuality: Sendable {
    private let logger: Logger
    private let made = NIOLockedValueBox<PasswordQualityCheck?>(nil)

    init(logger: Logger) {
        self.logger = logger
    }

    /// The system's policy; the first caller sets it up, any others meanwhile wait for it.
    var check: PasswordQualityCheck {
        made.withLockedValue { made in
            if let made { return made }
            let check = Self.make(logger: logger)
            made = check
            return check
        }
    }

    private static func make(logger: Logger) -> PasswordQualityCheck {
        guard let quality = SystemPasswordQuality() else {
            logger.critical("libpwquality cannot initialise: password-quality rules refuse every password")
            return PasswordQualityCheck { _, _ in PasswordQualityFailure(.rejected) }
        }
        if let problem = quality.problem { logger.warning("libpwquality: /etc/security/pwquality.conf not used (\(problem)); its defaults apply") }
        if quality.dictionaryMissing { logger.warning("libpwquality: cracklib's dictionary cannot be loaded (install cracklib-runtime); password-quality rules run without the dictionary check") }
        return quality.check
    }
}
