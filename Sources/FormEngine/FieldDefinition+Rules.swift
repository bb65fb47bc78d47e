import SignupProtocol

extension FieldDefinition {
    /// The validation that follows from the values alone. For a field with an
    /// availability check, `validating` here means "valid, check it".
    /// `valueOf` reads another field's value by name; `checked`: a valid value is then
    /// checked (availability or password quality: the form's `FieldPlan`).
    func evaluate(_ value: String, checked: Bool, valueOf: (String) -> String, configuration: FormConfiguration) -> Validation {
        if value.isEmpty { return .empty }
        let prefix = messagePrefix
        for spec in rules {
            if let failure = spec.rule.failure(of: value, prefix: prefix, valueOf: valueOf, configuration: configuration) {
                if let id = spec.messageID { return Validation(.failed, MessageRef(id, failure.params)) }
                let id = FieldRule.resolveFailureID(failure.id, knows: configuration.catalogues.knows)
                return Validation(.failed, MessageRef(id, failure.params))
            }
        }
        return checked ? Validation(.validating, MessageRef("\(prefix).checking")) : Validation(.ok, MessageRef(okMessageID))
    }
}

extension FieldDefinition {
    /// The rules as `describe` states them: what the engine itself knows. The daemon adds
    /// the normalisation and identity of usernames (`UsernameRule`'s).
    public var rulesDescription: FieldRulesDescription {
        var description = FieldRulesDescription()
        for spec in rules {
            switch spec.rule {
            case .minLength(let n): description.minCharacters = n
            case .maxLength(let n): description.maxCharacters = n
            case .maxBytes(let n): description.maxBytes = n
            case .characters(let classes): description.allowedCategories = classes.flatMap(\.categories)
            case .username:
                description.maxCharacters = UsernameRules.maxLength
                description.maxBytes = UsernameRules.maxBytes
                description.allowedCategories = ["Lu", "Ll", "Lt", "Lm", "Lo", "Nd"]
                description.refusedProperties = ["Default_Ignorable_Code_Point"]
                description.refusedCodePoints = ["U+0640"]
                description.requiredCategories = ["Lu", "Ll", "Lt", "Lo", "Nd"]
                description.maxCodePointsPerCharacter = UsernameRules.maxCodePointsPerCharacter
            case .phone(let minDigits, let maxDigits, let region):
                description.minDigits = minDigits
                description.maxDigits = maxDigits
                description.region = region
            case .email: description.email = true
            case .equals(let field): description.equalsField = field
            case .notContaining(let field): description.notContainingField = field
            case .passwordQuality: description.passwordQuality = "libpwquality"
            case .available: break
            }
        }
        if description.minCharacters == nil, !rules.contains(where: { if case .equals = $0.rule { true } else { false } }) {
            description.minCharacters = 1
        }
        return description
    }
}
