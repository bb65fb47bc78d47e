import SignupProtocol

/// What a field holds. The kind chooses the default message-id prefix, whether the value
/// is masked, and which identity a field can be.
public enum FieldKind: String, Sendable, Codable, CaseIterable {
    case text
    case secret
    case username
    case phone
    case email

    /// The first part of the message ids of this field's rules (`username.too_long`).
    public var messagePrefix: String {
        switch self {
        case .text: "field"
        case .secret: "password"
        case .username: "username"
        case .phone: "phone"
        case .email: "email"
        }
    }

    /// The identity an account is known by, when a field of this kind is a form's identity.
    public var identityKind: IdentityKind? {
        switch self {
        case .username: .username
        case .phone: .phone
        case .email: .email
        case .text, .secret: nil
        }
    }
}

/// Who an account is: a username (Unicode identity), a phone number (its digits) or an
/// e-mail address. The three never collide.
public enum IdentityKind: String, Sendable, Codable, CaseIterable {
    case username
    case phone
    case email
}

/// A text per locale, with English as the fallback.
public struct LocalizedText: Sendable, Codable, Equatable {
    /// By BCP 47 tag as written (`en`, `zh-CN`); "en" is always present.
    public var texts: [String: String]

    public init(_ english: String, _ others: [String: String] = [:]) {
        texts = others
        texts["en"] = english
    }

    /// The text for `locale`: exact tag, then shorter prefixes of it, then English.
    public func text(for locale: String) -> String {
        for candidate in LocaleFallback.candidates(locale) {
            if let match = texts.first(where: { $0.key.lowercased() == candidate.lowercased() }) { return match.value }
        }
        let language = LocaleFallback.writing(locale)
        if let match = texts.sorted(by: { $0.key < $1.key }).first(where: { $0.key.contains("-") && LocaleFallback.writing($0.key) == language }) { return match.value }
        return texts["en"] ?? ""
    }
}

/// One rule of a field, with the message id it fails with when the form overrides it.
public struct RuleSpec: Sendable, Codable, Equatable {
    public var rule: FieldRule
    /// Replaces the rule's own failure message id (`rule = min-length 6 as password.short`).
    public var messageID: String?

    public init(_ rule: FieldRule, messageID: String? = nil) {
        self.rule = rule
        self.messageID = messageID
    }
}

/// One input of a form definition.
public struct FieldDefinition: Sendable, Codable, Equatable {
    public var name: String
    public var kind: FieldKind
    public var labels: LocalizedText
    /// Applied in order; the first that fails decides the message.
    public var rules: [RuleSpec]
    /// The message id of a valid value (default `<prefix>.valid`).
    public var okMessageID: String

    public init(name: String, kind: FieldKind, labels: LocalizedText, rules: [RuleSpec], okMessageID: String? = nil) {
        self.name = name
        self.kind = kind
        self.labels = labels
        self.rules = rules
        self.okMessageID = okMessageID ?? "\(kind.messagePrefix).valid"
    }

    public var secret: Bool { kind == .secret }

    /// The field's own cap on a value's UTF-8 bytes as sent, if a rule sets one.
    var ownByteCap: Int? {
        for spec in rules {
            switch spec.rule {
            case .maxBytes(let n): return n
            case .username: return UsernameRules.maxInputBytes
            default: continue
            }
        }
        return nil
    }
    public var messagePrefix: String { kind.messagePrefix }

    /// Whether a valid value is then checked for availability.
    public var checksAvailability: Bool { rules.contains { $0.rule == .available } }

    /// Whether a value that passes the other rules is then checked by the password-quality
    /// policy, and against which field's value as the user's name.
    public var checksQuality: Bool { rules.contains { if case .passwordQuality = $0.rule { true } else { false } } }
    public var qualityUserField: String? {
        for spec in rules { if case .passwordQuality(let field) = spec.rule { return field } }
        return nil
    }

    /// The fields this one's validity depends on besides itself.
    public var dependencies: [String] {
        rules.compactMap(\.rule.otherField)
    }

    /// Whether this field's validity depends on the field named `name` (a `dependencies`
    /// that builds no array: asked of every field on every keystroke).
    public func dependsOn(_ name: String) -> Bool {
        rules.contains { $0.rule.otherField == name }
    }
}

/// What a successful submit asks the daemon to do.
public enum SubmitAction: String, Sendable, Codable, CaseIterable {
    case signup
    case login
}

/// A form is data: its fields with their rules, which field is the identity and which the
/// secret, and what submit does. Built-in and operator forms are read from the same
/// format (`FormFile`); the engine knows no form or field by name.
public struct FormDefinition: Sendable, Codable, Equatable {
    public var name: String
    public var titles: LocalizedText
    public var fields: [FieldDefinition] {
        didSet {
            plan = FieldPlan.plans(of: fields)
            fieldNames = fields.map(\.name)
        }
    }
    /// What each keystroke asks of the fields, worked out from `fields` whenever they change
    /// (`FieldPlan`); shared by every session of the form, not stored in a handover.
    private(set) var plan: [FieldPlan]
    /// The fields' names, in order (`index(of:)`): looking a name up in `fields` copied each
    /// field it passed, retaining its strings and arrays, several times a keystroke.
    private var fieldNames: [String]
    public var submitLabels: LocalizedText
    public var action: SubmitAction
    /// The index of the field an account is known by.
    public var identityField: Int
    /// The index of the password field submitted with it.
    public var secretField: Int

    public init(name: String, titles: LocalizedText, fields: [FieldDefinition], submitLabels: LocalizedText, action: SubmitAction, identityField: Int, secretField: Int) {
        self.name = name
        self.titles = titles
        self.fields = fields
        plan = FieldPlan.plans(of: fields)
        fieldNames = fields.map(\.name)
        self.submitLabels = submitLabels
        self.action = action
        self.identityField = identityField
        self.secretField = secretField
    }

    enum CodingKeys: String, CodingKey {
        case name, titles, fields, submitLabels, action, identityField, secretField
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        try self.init(
            name: container.decode(String.self, forKey: .name), titles: container.decode(LocalizedText.self, forKey: .titles),
            fields: container.decode([FieldDefinition].self, forKey: .fields), submitLabels: container.decode(LocalizedText.self, forKey: .submitLabels),
            action: container.decode(SubmitAction.self, forKey: .action), identityField: container.decode(Int.self, forKey: .identityField),
            secretField: container.decode(Int.self, forKey: .secretField)
        )
    }

    /// The kind of identity the form signs up or logs in.
    public var identityKind: IdentityKind { fields[identityField].kind.identityKind ?? .username }

    /// The identity as a submit or check names it: a phone number with its rule's region.
    public func identity(_ value: String) -> IdentityValue {
        let region = fields[identityField].rules.lazy.compactMap { spec -> String? in
            if case .phone(_, _, let region) = spec.rule { region } else { nil }
        }.first
        return IdentityValue(identityKind, value, region: region)
    }

    /// The index of the field named `name`.
    public func index(of name: String) -> Int? {
        fieldNames.firstIndex(of: name)
    }

    /// The most UTF-8 bytes a value of a field may have as sent; `set` refuses a longer
    /// one (`valueTooLong`) and the field keeps its value. It is the field's own byte
    /// cap — `max-bytes N`, or for a username the input cap of its rule (four times its
    /// 255 bytes: normalisation can shrink text) — or, for a field that must equal
    /// another, that field's; `defaultInputByteCap` for a field with none.
    public func inputByteCap(of index: Int) -> Int {
        plan[index].inputByteCap
    }

    /// The byte cap of a field with no byte rule of its own.
    public static let defaultInputByteCap = 4096

    /// The wire description of this form, labels in `locale`.
    public func description(locale: String = "en") -> FormDescription {
        FormDescription(
            name: name,
            fields: fields.indices.map { index in
                let field = fields[index]
                var rules = field.rulesDescription
                rules.maxInputBytes = inputByteCap(of: index)
                return FormDescription.Field(name: field.name, secret: field.secret, label: field.labels.text(for: locale), rules: rules, kind: field.kind.rawValue)
            },
            submitLabel: submitLabels.text(for: locale),
            title: titles.text(for: locale),
            action: action.rawValue
        )
    }
}

/// BCP 47 lookup order (RFC 4647 "lookup"): the tag, then each shorter prefix.
public enum LocaleFallback {
    /// The language and, for Chinese, the script a tag is written in: "zh-hant" for
    /// Traditional (script Hant, or region TW, HK or MO without Hans), "zh" for the
    /// others; the lower-cased language for every other tag. A catalogue of another tag
    /// is a fallback only when this is the same: Traditional readers do not get
    /// Simplified Chinese.
    public static func writing(_ tag: String) -> String {
        let parts = tag.replacing("_", with: "-").lowercased().split(separator: "-").map(String.init)
        guard let language = parts.first else { return "" }
        guard language == "zh" else { return language }
        if parts.contains("hant") { return "zh-hant" }
        if parts.contains("hans") { return "zh" }
        return parts.contains(where: { ["tw", "hk", "mo"].contains($0) }) ? "zh-hant" : "zh"
    }

    public static func candidates(_ tag: String) -> [String] {
        var parts = tag.split(separator: "-").map(String.init)
        var result: [String] = []
        while !parts.isEmpty {
            result.append(parts.joined(separator: "-"))
            parts.removeLast()
        }
        return result
    }
}
