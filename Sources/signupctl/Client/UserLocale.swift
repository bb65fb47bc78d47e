import SignupProtocol

#if canImport(Glibc)
import Glibc
#endif

/// The user's language for messages and labels, as POSIX chooses it: the first of
/// `LC_ALL`, `LC_MESSAGES`, `LANG` that is set and not empty. `zh_CN.UTF-8@variant`
/// becomes the BCP 47 tag `zh-CN`; `C` and `POSIX` (and anything unreadable) mean none,
/// which the daemon serves in English.
enum UserLocale {
    static var current: String? {
        for name in ["LC_ALL", "LC_MESSAGES", "LANG"] {
            guard let value = getenv(name), value.pointee != 0 else { continue }
            return tag(fromPOSIX: String(cString: value))
        }
        return nil
    }

    static func tag(fromPOSIX value: String) -> String? {
        let name = value.split(separator: ".", maxSplits: 1).first.map(String.init) ?? value
        let bare = name.split(separator: "@", maxSplits: 1).first.map(String.init) ?? name
        guard bare != "C", bare != "POSIX", !bare.isEmpty else { return nil }
        let tag = bare.replacing("_", with: "-")
        return LocaleTag.isWellFormed(tag) ? tag : nil
    }
}
