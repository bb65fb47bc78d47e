import SignupProtocol

extension FieldDefinition {
    /// What the values alone make of this field's value: the first rule it fails decides.
    /// For a field with an availability check, `checking` means "valid, check it".
    /// `valueOf` reads another field's value by name; `checked`: a valid value is then
    /// checked (availability or password quality: the form's `FieldPlan`).
    func outcome(of value: String, checked: Bool, valueOf: (String) -> String, configuration: FormConfiguration) -> FieldOutcome {
        if value.isEmpty { return .empty }
        for index in rules.indices {
            let rule = rules[index].rule
            if let failed = rule.fails(value, valueOf: valueOf) {
                if failed { return .ruleFailed(index) }
            } else if let failure = rule.failure(of: value, prefix: messagePrefix, valueOf: valueOf, configuration: configuration) {
                return .failed(failed(rules[index], failure, catalogues: configuration.catalogues))
            }
        }
        return checked ? .checking : .ok
    }

    /// The validation an outcome shows, its message id resolved against the catalogues.
    func validation(of outcome: FieldOutcome, catalogues: MessageCatalogues) -> Validation {
        switch outcome {
        case .empty: .empty
        case .ok: Validation(.ok, MessageRef(okMessageID))
        case .checking: Validation(.validating, MessageRef("\(messagePrefix).checking"))
        case .ruleFailed(let index):
            rules[index].rule.constantFailure(prefix: messagePrefix).map { failed(rules[index], $0, catalogues: catalogues) } ?? .empty
        case .failed(let validation): validation
        }
    }

    /// A failure as sent: the rule's own id (`as ID`), else the prefix's or the generic one.
    private func failed(_ spec: RuleSpec, _ failure: MessageRef, catalogues: MessageCatalogues) -> Validation {
        if let id = spec.messageID { return Validation(.failed, MessageRef(id, failure.params)) }
        return Validation(.failed, MessageRef(FieldRule.resolveFailureID(failure.id, knows: catalogues.knows), failure.params))
    }
}

/// What a field's value comes to under its rules (`FieldDefinition.outcome`), before its
/// message is resolved and rendered. Those that read the same whatever the value (all but
/// `empty` and `failed`) are kept rendered by the session that saw them (`RenderedOutcomes`).
enum FieldOutcome {
    case empty
    case ok
    /// Valid, and checked next (availability or password quality).
    case checking
    /// The rule at this index failed, with its constant message (`FieldRule.constantFailure`).
    case ruleFailed(Int)
    /// A rule failed with a message that depends on the value (username, phone number).
    case failed(Validation)

    /// Its place among the field's kept outcomes (ok, checking, then one per rule); nil
    /// for those not kept.
    var keptOffset: Int? {
        switch self {
        case .ok: 0
        case .checking: 1
        case .ruleFailed(let index): 2 + index
        case .empty, .failed: nil
        }
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
