import CPhoneLibrary
import FormEngine
import Logging
import NIOConcurrencyHelpers
import UnixIO

#if canImport(Glibc)
import Glibc
#endif

/// libsignupd-phone.so: Google's libphonenumber (Debian's libphonenumber8) behind signupd's C
/// shim, opened when a number is first checked or by the warm-up after start, not loaded by
/// every start: libphonenumber, protobuf and abseil, a dozen libraries, cost each start
/// 2.5 ms before `main` (issue 29, the cold start).
///
/// It becomes code in the daemon, so it is checked as signupd's own directories are
/// (`PrivateDirectory`): a regular file of root or signupd's user that nobody else may
/// write, in directories nobody else may write, a whole ELF object (a truncated one would
/// kill the process with SIGBUS when mapped), and one that a child process loads and uses
/// without dying, giving known answers (`verify`). One that is missing, or fails a check of
/// the file or in the child, is never opened in signupd; one that passes those but then
/// gives a wrong known answer in signupd itself is closed again (its constructors have run
/// in signupd by then: a library root installed is trusted, README). Either way phone rules
/// answer `phone.unavailable`, the rest of signupd serves on, and whichever asks first (the
/// warm-up just after start, or the first number) says why at critical.
enum PhoneLibrary {
    /// Why phone numbers cannot be checked: where signupd looked or what it found there.
    struct Unusable: Error, CustomStringConvertible {
        let description: String
        /// The trial did not happen rather than fail (its process could not be started, or
        /// was ended from outside): tried again later, not blamed on the library.
        var passing = false
    }

    /// What an operator does about it, after the reason.
    static let remedy = "phone rules refuse every number until that is fixed and signupd restarted (systemctl restart signupd); a library that is missing, damaged or was writable by others (it may have been changed) is put back by reinstalling the package: apt install --reinstall signupd, or, installed from a .deb file, apt install --reinstall ./signupd_\(signupdVersion)_amd64.deb"

    /// Finds and checks the library without opening it here: its path, or why it must not
    /// be opened. The last check loads it in a child process (`signupd_phone_library_probe`,
    /// signupd run again as `PhoneLibraryTrial`), so that a damaged library kills that, not
    /// signupd. For `--check-config` as well as for
    /// `load`; `--check-config` run by root tries it as `serviceUser` (the package's `signupd`),
    /// since root may read what that user cannot (helper-29).
    static func check(as serviceUser: (uid: uid_t, gid: gid_t)? = nil) -> Result<String, Unusable> {
        var found = [CChar](repeating: 0, count: 4_608)
        let located = signupd_phone_library_locate(&found, found.count) != 0
        let text = String(decoding: found.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        guard located else { return .failure(Unusable(description: text)) }
        // Where it was found, and (below) where it really is, if that is elsewhere: nobody
        // else may swap the link or the file.
        do {
            try PrivateDirectory.check(PrivateDirectory.parent(of: text), runsAs: serviceUser?.uid ?? geteuid())
        } catch {
            return .failure(Unusable(description: "\(text): \(error)"))
        }
        guard let resolved = realpath(text, nil) else {
            return .failure(Unusable(description: "cannot resolve \(text): \(UnixIO.errnoText(errno))"))
        }
        let path = String(cString: resolved)
        free(resolved)
        var info = stat()
        guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            return .failure(Unusable(description: "\(path) is not a regular file"))
        }
        // Writable by others, it may have been changed: the advice is the remedy's
        // reinstall, not a chmod that would keep whatever was written (helper-33).
        if let refusal = PrivateDirectory.fileRefusal(info, runsAs: serviceUser?.uid ?? geteuid(), writable: "it may have been changed: put it back by reinstalling the package") {
            return .failure(Unusable(description: "\(path): \(refusal)"))
        }
        do {
            try PrivateDirectory.check(PrivateDirectory.parent(of: path), runsAs: serviceUser?.uid ?? geteuid())
        } catch {
            return .failure(Unusable(description: "\(path): \(error)"))
        }
        var why = [CChar](repeating: 0, count: 4_608)
        func unusable(passing: Bool = false) -> Unusable {
            Unusable(description: String(decoding: why.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self), passing: passing)
        }
        guard signupd_phone_library_check_elf(path, &why, why.count) != 0 else { return .failure(unusable()) }
        switch signupd_phone_library_probe(path, PhoneLibraryTrial.program, serviceUser?.uid ?? uid_t.max, serviceUser?.gid ?? gid_t.max, &why, why.count) {
        case 1: return .success(path)
        case 0: return .failure(unusable())
        default: return .failure(unusable(passing: true))
        }
    }

    /// The library's functions, checked and opened once for the process by the warm-up just
    /// after start (or, in a process without one, the first number checked); why not when it
    /// cannot be used, logged at critical by that look, before any number is refused. A
    /// number checked while that first look is under way waits for it, at most until
    /// `firstLookWait` after the look began, and is refused as one that cannot be checked now
    /// after that: it is checked on an event loop, and every connection of that loop waits
    /// with it (helper-35: a trial stopped for 10 s held half the daemon's connections). A
    /// trial that did not happen (`Unusable.passing`) is logged as an error and tried again
    /// by `warmUp`; numbers checked meanwhile are refused at once.
    static func load() -> Result<signupd_phone_functions, Unusable> {
        if let outcome = published.withLockedValue({ $0 }) { return outcome }
        let (began, claimed) = claimFirstLook()
        if claimed { return look() }
        let left = firstLookWait - (ContinuousClock.now - began)
        let seconds = Double(left.components.seconds) + Double(left.components.attoseconds) / 1e18
        if seconds > 0, firstLookDone.lock(whenValue: true, timeoutSeconds: seconds) {
            firstLookDone.unlock()
        }
        return published.withLockedValue { $0 } ?? .failure(Unusable(description: "the phone library is still being checked (just after start)", passing: true))
    }

    /// How long after the first look began a number checked meanwhile may wait for it: a
    /// look takes about 25 ms (a release build: the trial's start, the library's, the open).
    static let firstLookWait = Duration.seconds(1)

    /// Begins the first look now, so that a number checked before it ends waits for it
    /// rather than doing it on an event loop, then loads it in the background and again,
    /// 1 s, 2 s, ... up to a minute apart, for as long as the trial did not happen
    /// (helper-34: a start at the service's TasksMax, or a signal, left phone numbers off
    /// until a restart).
    static func warmUp() {
        let (_, claimed) = claimFirstLook()
        Task.detached(priority: .utility) {
            let first = claimed ? look() : load()
            guard case .failure(let unusable) = first, unusable.passing else { return }
            var delay = Duration.seconds(1)
            while true {
                try? await Task.sleep(for: delay)
                if Task.isCancelled { return }
                guard case .failure(let unusable) = look(), unusable.passing else { return }
                delay = min(delay * 2, .seconds(60))
            }
        }
    }

    /// When the first look began, and whether the caller has just begun it (and must take it).
    private static func claimFirstLook() -> (began: ContinuousClock.Instant, claimed: Bool) {
        firstLookBegan.withLockedValue { began in
            if let began { return (began, false) }
            let now = ContinuousClock.now
            began = now
            return (now, true)
        }
    }

    /// One look, one at a time: published, and the first one's waiters woken.
    private static func look() -> Result<signupd_phone_functions, Unusable> {
        let outcome = attempts.withLock { attempt() }
        firstLookDone.lock()
        firstLookDone.unlock(withValue: true)
        return outcome
    }

    /// One look, under `attempts`: the checks, the trial, the open; published for `load`,
    /// `looked` and `library`, and logged.
    private static func attempt() -> Result<signupd_phone_functions, Unusable> {
        let started = ContinuousClock.now
        var openedPath = ""
        let outcome = check().flatMap { path -> Result<signupd_phone_functions, Unusable> in
            openedPath = path
            var why: UnsafePointer<CChar>?
            guard let functions = signupd_phone_library_open(path, &why) else {
                return .failure(Unusable(description: why.map { String(cString: $0) } ?? "cannot open \(path)"))
            }
            return .success(functions.pointee)
        }
        let logger = Logger(label: "signupd")
        switch outcome {
        case .failure(let unusable) where unusable.passing:
            // Not the library's fault, and no reinstall: said as an error, tried again.
            logger.error("phone numbers cannot be checked yet: \(unusable); trying again shortly (numbers are refused as phone.unavailable until then)")
        case .failure(let unusable):
            logger.critical("phone numbers cannot be checked: \(unusable); \(remedy)")
        case .success:
            opened.withLockedValue { $0 = openedPath }
            // Which file, and what the checks and the load cost (helper-28).
            let took = ContinuousClock.now - started
            let ms = Double(took.components.seconds) * 1000 + Double(took.components.attoseconds) / 1e15
            let wasPassing = published.withLockedValue { if case .failure(let before) = $0 { return before.passing } else { return false } }
            let metadata: Logger.Metadata = ["library": "\(openedPath)", "ms": "\((ms * 100).rounded() / 100)"]
            if wasPassing {
                logger.notice("phone numbers: libphonenumber opened after all", metadata: metadata)
            } else {
                logger.debug("phone numbers: libphonenumber opened", metadata: metadata)
            }
        }
        published.withLockedValue { $0 = outcome }
        return outcome
    }

    /// What the first look found: nil before it, else why the library cannot be used (nil
    /// inside when it can). For `status`.
    static var looked: Unusable?? {
        // Never waits for a look under way (helper-34: `status` waited the trial's 10 s).
        published.withLockedValue { loaded in
            loaded.map { outcome in
                if case .failure(let unusable) = outcome { return unusable }
                return nil
            }
        }
    }

    /// The file that was opened, once it was (for administrators' `status`: which library
    /// numbers are checked with; the debug log says it too).
    static var library: String? { opened.withLockedValue { $0 } }

    /// The last look's outcome, read without waiting for one under way.
    private static let published = NIOLockedValueBox<Result<signupd_phone_functions, Unusable>?>(nil)
    /// Held for a look: one at a time.
    private static let attempts = NIOLock()
    /// When the first look began (nil: nobody has taken it on yet), for how long a number
    /// may wait for it.
    private static let firstLookBegan = NIOLockedValueBox<ContinuousClock.Instant?>(nil)
    /// True once the first look has published its outcome.
    private static let firstLookDone = ConditionLock(value: false)

    private static let opened = NIOLockedValueBox<String?>(nil)
}

extension PhoneNumberRule {
    /// Google's libphonenumber (Debian's libphonenumber8): the number parsed with the form's
    /// default region, checked against its country's numbering plan as a possible and valid
    /// mobile or fixed-line number, its identity the E.164 form.
    static let libphonenumber = PhoneNumberRule { text, region in
        // A library that cannot be used was logged, critical, by the first `load` (the
        // warm-up after start, or this), and every number is refused as one that cannot be
        // checked now (`phone.unavailable`, the server's fault, not the person's), as
        // libpwquality's failure refuses every password: no keystroke stops the daemon for
        // everyone.
        guard case .success(let phone) = PhoneLibrary.load() else { return PhoneVerdict(.unavailable, nationalDigits: nil, inRegion: false) }
        var e164 = [CChar](repeating: 0, count: 32)
        var nationalDigits: Int32 = -1
        var inRegion: Int32 = 0
        let status = phone.parse(text, region ?? "ZZ", &e164, e164.count, &nationalDigits, &inRegion)
        let verdict: PhoneVerdict.Status = switch status {
        case SIGNUPD_PHONE_OK:
            // An identity is only ever a whole E.164 number, whatever the library said
            // (helper-30: an empty one made every number the account `tel:`).
            Self.e164(e164).map { .valid(e164: $0) } ?? .unavailable
        case SIGNUPD_PHONE_TOO_SHORT: .tooShort
        case SIGNUPD_PHONE_TOO_LONG: .tooLong
        case SIGNUPD_PHONE_INVALID_COUNTRY: .invalidCountry
        case SIGNUPD_PHONE_IMPOSSIBLE: .impossible
        case SIGNUPD_PHONE_WRONG_TYPE: .wrongType
        default: .notANumber
        }
        return PhoneVerdict(verdict, nationalDigits: nationalDigits >= 0 ? Int(nationalDigits) : nil, inRegion: inRegion != 0)
    }

    /// `+`, then a first digit 1-9 and 2 to 14 more (ITU-T E.164: at most 15 digits; the
    /// shortest numbers in use have 7), or nil.
    static func e164(_ bytes: [CChar]) -> String? {
        let text = bytes.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        guard text.count >= 4, text.count <= 16, text[0] == UInt8(ascii: "+"), (UInt8(ascii: "1")...UInt8(ascii: "9")).contains(text[1]),
              text.dropFirst(2).allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) })
        else { return nil }
        return String(decoding: text, as: UTF8.self)
    }

    /// Whether libphonenumber knows `region` (ISO 3166 alpha-2).
    static func isKnownRegion(_ region: String) -> Bool {
        (try? PhoneLibrary.load().get()).map { $0.region_is_known(region) != 0 } ?? false
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
