/// The page's language: `?lang=` (then remembered in the `lang` cookie), the cookie, or the
/// browser's `Accept-Language`. The bridge offers what signupd ships, English and
/// Simplified Chinese; signupd resolves the tag for its own messages.
enum LocaleChoice {
    static let offered = ["en", "zh-CN"]

    static func choose(query: String?, cookie: String?, acceptLanguage: String?) -> String {
        if let query, let offered = offered(query) { return offered }
        if let cookie, let offered = offered(cookie) { return offered }
        return negotiate(acceptLanguage ?? "")
    }

    /// An offered locale a tag stands for: `zh`, `zh-CN`, `zh-Hans…` are Simplified
    /// Chinese (a Traditional tag is not); `en…` is English.
    static func offered(_ tag: String) -> String? {
        let parts = tag.lowercased().replacingUnderscores.split(separator: "-").map(String.init)
        guard let language = parts.first else { return nil }
        switch language {
        case "en": return "en"
        case "zh":
            let traditional = parts.dropFirst().contains { ["hant", "tw", "hk", "mo"].contains($0) }
            return traditional ? nil : "zh-CN"
        default: return nil
        }
    }

    /// RFC 9110's `Accept-Language`: the offered locale with the highest weight, English
    /// when none is asked for.
    static func negotiate(_ header: String) -> String {
        var best: (locale: String, weight: Double)?
        for entry in header.split(separator: ",") {
            let parts = entry.split(separator: ";")
            guard let tag = parts.first?.trimmingSpaces, let locale = offered(tag) else { continue }
            var weight = 1.0
            for parameter in parts.dropFirst() {
                let text = parameter.trimmingSpaces
                if text.hasPrefix("q="), let value = Double(text.dropFirst(2)) { weight = value }
            }
            if weight > 0, weight > (best?.weight ?? 0) { best = (locale, weight) }
        }
        return best?.locale ?? "en"
    }
}

extension String {
    var replacingUnderscores: String { String(map { $0 == "_" ? "-" : $0 }) }
}
