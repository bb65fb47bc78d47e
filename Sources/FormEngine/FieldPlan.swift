import SignupProtocol

/// What the engine asks of one field on every keystroke, worked out once per form: asking
/// the field itself scanned its rules (copying each, with its strings and arrays) several
/// times a keystroke, for answers that never change (issue 29's profile: a quarter of the
/// engine's time was retains and releases in `revalidate`).
struct FieldPlan: Sendable, Equatable {
    /// A valid value is then checked for availability (`FieldDefinition.checksAvailability`).
    var checksAvailability: Bool
    /// A value passing the other rules is then checked by the password-quality policy.
    var checksQuality: Bool
    /// The fields a change of this one revalidates, in form order: itself and those whose
    /// rules read its value (`FieldDefinition.dependsOn`).
    var revalidates: [Int]
    /// The most UTF-8 bytes a `set` of this field may bring (`FormDefinition.inputByteCap`).
    var inputByteCap: Int
    /// Where this field's outcomes start among a session's kept ones (`RenderedOutcomes`):
    /// `FieldOutcome.keptOffset` counts from here.
    var firstKept: Int

    static func plans(of fields: [FieldDefinition]) -> [FieldPlan] {
        var firstKept = 0
        return fields.indices.map { changed in
            let field = fields[changed]
            defer { firstKept += 2 + field.rules.count }
            return FieldPlan(
                checksAvailability: field.checksAvailability, checksQuality: field.checksQuality,
                revalidates: fields.indices.filter { $0 == changed || fields[$0].dependsOn(field.name) },
                inputByteCap: inputByteCap(of: changed, in: fields), firstKept: firstKept
            )
        }
    }

    /// The field's own byte cap, or for a field that must equal another, that field's;
    /// `FormDefinition.defaultInputByteCap` for a field with none.
    private static func inputByteCap(of index: Int, in fields: [FieldDefinition]) -> Int {
        if let own = fields[index].ownByteCap { return own }
        for spec in fields[index].rules {
            if case .equals(let other) = spec.rule, let match = fields.firstIndex(where: { $0.name == other }), let cap = fields[match].ownByteCap { return cap }
        }
        return FormDefinition.defaultInputByteCap
    }
}

/// The validations a session has shown, rendered, by outcome (`FieldOutcome.keptOffset`
/// from the field's `FieldPlan.firstKept`): typing moves a field between a few outcomes
/// ("too short", "acceptable"), and one seen before is shown again without resolving its
/// message id and rendering its text on every keystroke. At most one per outcome of the
/// form's rules (a handful a field), nothing before the first keystroke; not stored in a
/// handover, and emptied by a locale switch.
struct RenderedOutcomes: Sendable {
    private var slots: [Int] = []
    private var shown: [(Validation, LocalizedMessage)] = []

    /// Where the outcome in `slot` is kept, if it is.
    func index(of slot: Int) -> Int? {
        slots.firstIndex(of: slot)
    }

    subscript(index: Int) -> (Validation, LocalizedMessage) { shown[index] }

    mutating func keep(slot: Int, _ validation: Validation, _ message: LocalizedMessage) {
        slots.append(slot)
        shown.append((validation, message))
    }
}
