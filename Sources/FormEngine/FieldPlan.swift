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

    static func plans(of fields: [FieldDefinition]) -> [FieldPlan] {
        fields.indices.map { changed in
            let field = fields[changed]
            return FieldPlan(
                checksAvailability: field.checksAvailability, checksQuality: field.checksQuality,
                revalidates: fields.indices.filter { $0 == changed || fields[$0].dependsOn(field.name) }
            )
        }
    }
}
