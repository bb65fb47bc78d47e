import SignupProtocol

/// The texts of every message id in one locale.
public struct MessageCatalogue: Sendable, Equatable {
    /// BCP 47 tag, as the catalogue's file is named (`zh-CN.messages`).
    public var locale: String
    public var texts: [String: String]

    public init(locale: String, texts: [String: String]) {
        self.locale = locale
        self.texts = texts
    }
}

/// The catalogues of every locale a daemon speaks. English (`en`) is the fallback of
/// every lookup, and must hold every id a form can produce.
public struct MessageCatalogues: Sendable, Equatable {
    public private(set) var byLocale: [String: MessageCatalogue] = [:]

    public init(_ catalogues: [MessageCatalogue] = []) {
        for catalogue in catalogues { merge(catalogue) }
    }

    /// Adds a catalogue; texts of a locale already present are replaced id by id.
    public mutating func merge(_ catalogue: MessageCatalogue) {
        let key = catalogue.locale.lowercased()
        if var existing = byLocale[key] {
            existing.texts.merge(catalogue.texts) { _, new in new }
            byLocale[key] = existing
        } else {
            byLocale[key] = catalogue
        }
    }

    /// The locales, sorted.
    public var locales: [String] { byLocale.values.map(\.locale).sorted() }

    /// The locale a request for `tag` is served in: the tag or its shortest prefix with a
    /// catalogue (RFC 4647 lookup), then a catalogue of the same language (`zh` → `zh-CN`),
    /// else `en`.
    public func resolve(_ tag: String) -> String {
        for candidate in LocaleFallback.candidates(tag) {
            if let catalogue = byLocale[candidate.lowercased()] { return catalogue.locale }
        }
        let language = LocaleFallback.writing(tag)
        if let catalogue = byLocale.keys.sorted().first(where: { $0.contains("-") && LocaleFallback.writing($0) == language }).flatMap({ byLocale[$0] }) {
            return catalogue.locale
        }
        return "en"
    }

    /// Whether English has a text for `id`.
    public func knows(_ id: String) -> Bool { byLocale["en"]?.texts[id] != nil }

    /// The placeholders each catalogue's text of `id` uses, by locale (those with a text).
    public func placeholderUses(of id: String) -> [(locale: String, names: Set<String>)] {
        byLocale.values.sorted { $0.locale < $1.locale }.compactMap { catalogue in
            catalogue.texts[id].map { (catalogue.locale, MessagePlaceholders.names(in: $0)) }
        }
    }

    /// The message rendered in `locale` (a resolved one): its text there, else in English,
    /// else the id itself. `{name}` is replaced by the parameter `name`.
    public func render(_ message: MessageRef, locale: String) -> LocalizedMessage {
        guard !message.id.isEmpty else { return .empty }
        let template = catalogue(for: locale)?.texts[message.id] ?? byLocale["en"]?.texts[message.id] ?? message.id
        return LocalizedMessage(id: message.id, params: message.params, text: Self.substitute(template, message.params))
    }

    /// The catalogue of a resolved locale. Keys are lowercased; a tag without capitals
    /// (`en`) is looked up as it is, without making a lowercased copy at every keystroke.
    private func catalogue(for locale: String) -> MessageCatalogue? {
        let hasCapitals = locale.utf8.contains { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") }
        return byLocale[hasCapitals ? locale.lowercased() : locale]
    }

    /// `{name}` replaced by the parameter `name`; an unknown or unclosed one is kept as it is.
    /// Scans UTF-8 bytes: braces are ASCII, so a byte `{` or `}` is always that character's
    /// scalar (no multi-byte sequence contains an ASCII byte), and a template without `{`
    /// (most of them) is returned as it is.
    static func substitute(_ template: String, _ params: [LocalizedMessage.Parameter]) -> String {
        let bytes = template.utf8
        guard var open = bytes.firstIndex(of: UInt8(ascii: "{")) else { return template }
        var result = ""
        result.reserveCapacity(bytes.count + 16)
        var from = bytes.startIndex
        while true {
            result += template[from..<open]
            guard let close = bytes[open...].firstIndex(of: UInt8(ascii: "}")) else {
                from = open
                break
            }
            let name = template[bytes.index(after: open)..<close]
            if let parameter = params.first(where: { $0.name == name }) {
                result += parameter.value.text
            } else {
                result += template[open..<bytes.index(after: close)]
            }
            from = bytes.index(after: close)
            guard let next = bytes[from...].firstIndex(of: UInt8(ascii: "{")) else { break }
            open = next
        }
        result += template[from...]
        return result
    }
}
