/// The form definitions of a handover state, each stored once (format version 3): a
/// session's record names its definition by index instead of carrying a copy. Without it
/// every session copied its whole definition (labels, messages and rules in every language,
/// about 50 KB for the shipped signup form), and 65,536 carried sessions made a state over
/// the gigabyte the next process reads.
///
/// One table serves one encoding or decoding. Version 4 fills it on one thread before the
/// sessions' records are written on several, which then only find definitions already in
/// it (`HandoverCodec.sessionRecords`). Version 3's JSON coding used it on one thread, from
/// the coder's `userInfo`.
public final class HandoverFormTable: @unchecked Sendable {
    static let key = CodingUserInfoKey(rawValue: "signupd.handoverForms")!

    /// The definitions, in the order first met.
    public private(set) var forms: [FormDefinition]

    init(forms: [FormDefinition] = []) {
        self.forms = forms
    }

    /// The index of `form`, added if new. Definitions are few (one per form and reload),
    /// so a linear search that compares names first is enough.
    func index(of form: FormDefinition) -> Int {
        if let found = forms.firstIndex(where: { $0.name == form.name && $0 == form }) { return found }
        forms.append(form)
        return forms.count - 1
    }

    /// The definition at `index`, if there is one.
    func form(at index: Int) -> FormDefinition? {
        forms.indices.contains(index) ? forms[index] : nil
    }

    /// The replacement for `forms` a decoder found (`HandoverState`'s `forms`, read first).
    func adopt(_ forms: [FormDefinition]) {
        self.forms = forms
    }
}

extension FormSession.PendingCheck {
    private enum CodingKeys: String, CodingKey {
        case id, field, value, valueBytes, deadline
    }

    /// Its value as base64 in version 3, like the session's values.
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(field, forKey: .field)
        if encoder.userInfo[HandoverFormTable.key] is HandoverFormTable {
            try container.encode(HandoverBytes(Array(value.utf8)), forKey: .valueBytes)
        } else {
            try container.encode(value, forKey: .value)
        }
        try container.encode(deadline, forKey: .deadline)
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(UInt64.self, forKey: .id)
        field = try container.decode(Int.self, forKey: .field)
        if let bytes = try container.decodeIfPresent(HandoverBytes.self, forKey: .valueBytes) {
            guard let text = String(validating: bytes.bytes, as: UTF8.self) else {
                throw DecodingError.dataCorruptedError(forKey: .valueBytes, in: container, debugDescription: "a value is not UTF-8")
            }
            value = text
        } else {
            value = try container.decode(String.self, forKey: .value)
        }
        deadline = try container.decode(Moment.self, forKey: .deadline)
    }
}

extension FormSession {
    /// The stored state, with its definition by index when a `HandoverFormTable` is in the
    /// coder's `userInfo` (format version 3) and as a copy otherwise (version 2).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        if let table = encoder.userInfo[HandoverFormTable.key] as? HandoverFormTable {
            try container.encode(table.index(of: form), forKey: .formIndex)
            try container.encode(values.map { HandoverBytes(Array($0.utf8)) }, forKey: .valueBytes)
        } else {
            try container.encode(form, forKey: .form)
            try container.encode(values, forKey: .values)
        }
        try container.encode(validations, forKey: .validations)
        try container.encode(phase, forKey: .phase)
        try container.encode(locale, forKey: .locale)
        try container.encodeIfPresent(lastResult, forKey: .lastResult)
        try container.encodeIfPresent(pendingCheck, forKey: .pendingCheck)
        try container.encode(pendingQuality, forKey: .pendingQuality)
        try container.encode(lastCheckID, forKey: .lastCheckID)
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let form: FormDefinition
        if let index = try container.decodeIfPresent(Int.self, forKey: .formIndex) {
            guard let table = decoder.userInfo[HandoverFormTable.key] as? HandoverFormTable, let found = table.form(at: index) else {
                throw DecodingError.dataCorruptedError(forKey: .formIndex, in: container, debugDescription: "no form definition \(index) in the state")
            }
            form = found
        } else {
            form = try container.decode(FormDefinition.self, forKey: .form)
        }
        let values: [String]
        if let bytes = try container.decodeIfPresent([HandoverBytes].self, forKey: .valueBytes) {
            values = try bytes.map { value in
                guard let text = String(validating: value.bytes, as: UTF8.self) else {
                    throw DecodingError.dataCorruptedError(forKey: .valueBytes, in: container, debugDescription: "a value is not UTF-8")
                }
                return text
            }
        } else {
            values = try container.decode([String].self, forKey: .values)
        }
        self.init(
            decoded: form, values: values,
            validations: try container.decode([Validation].self, forKey: .validations), phase: try container.decode(Phase.self, forKey: .phase),
            locale: try container.decode(String.self, forKey: .locale), lastResult: try container.decodeIfPresent(StoredResult.self, forKey: .lastResult),
            pendingCheck: try container.decodeIfPresent(PendingCheck.self, forKey: .pendingCheck),
            pendingQuality: try container.decodeIfPresent([PendingCheck].self, forKey: .pendingQuality) ?? [],
            lastCheckID: try container.decodeIfPresent(UInt64.self, forKey: .lastCheckID) ?? 0
        )
        guard values.count == form.fields.count, validations.count == form.fields.count else {
            throw DecodingError.dataCorruptedError(forKey: .values, in: container, debugDescription: "values and validations do not match the form's fields")
        }
    }
}
