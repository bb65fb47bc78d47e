import SignupProtocol

/// The checks of a whole form, once every line is read.
extension FormFile.Parser {
    mutating func finish() -> FormDefinition? {
        guard let header = formHeader else {
            // After a broken header, its own error says it.
            if problems.isEmpty { problems.append(ConfigError(file: file, line: 1, column: 1, message: "no [form] section")) }
            return nil
        }
        func required(_ key: String) throws(ConfigError) -> (String, ConfigLine) {
            guard let value = formValues[key] else { throw header.error(file, "[form] needs \"\(key) = ...\"", atValue: false) }
            return value
        }
        func attempt<T>(_ body: () throws(ConfigError) -> T) -> T? {
            do { return try body() } catch {
                problems.append(error)
                return nil
            }
        }
        let name = attempt { () throws(ConfigError) -> String in
            let (name, nameLine) = try required("name")
            guard name.utf8.count <= 64, name.unicodeScalars.allSatisfy({ ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "-" }),
                name.unicodeScalars.first.map({ ("a"..."z").contains($0) }) == true
            else { throw nameLine.error(file, "form name \"\(name)\" must be lower-case letters, digits and -, starting with a letter") }
            return name
        }
        let action = attempt { () throws(ConfigError) -> SubmitAction in
            let (actionText, actionLine) = try required("action")
            guard let action = SubmitAction(rawValue: actionText) else { throw actionLine.error(file, "unknown action \"\(actionText)\"; known: signup, login") }
            return action
        }
        _ = attempt { () throws(ConfigError) in _ = try required("submit") }
        if fields.isEmpty { problems.append(header.error(file, "form \"\(name ?? "?")\" has no [field NAME] sections", atValue: false)) }
        // The identity as written, when it names a field: rules that depend on it are
        // only checked against a real one (a missing identity is its own error).
        let identityName = formValues["identity"].map(\.0).flatMap { value in fields.contains { $0.name == value } ? value : nil }

        var definitions: [FieldDefinition] = []
        var complete = true
        for field in fields {
            // A kind or label line that was wrong has said so: not again as missing
            // (helper-50: `kind = usrname` was two errors).
            if (field.kind == nil && field.seen.contains("kind")) || (field.labels["en"] == nil && field.seen.contains("label")) {
                complete = false
                continue
            }
            let definition = attempt { () throws(ConfigError) -> FieldDefinition in
                guard let kind = field.kind else { throw field.header.error(file, "[field \(field.name)] needs \"kind = ...\"", atValue: false) }
                guard let english = field.labels["en"] else { throw field.header.error(file, "[field \(field.name)] needs \"label = ...\" (the English label)", atValue: false) }
                for (spec, line) in field.rules {
                    switch spec.rule {
                    case .passwordQuality where kind != .secret:
                        throw line.error(file, "rule password-quality needs kind = secret")
                    case .passwordQuality(let other?):
                        guard fields.contains(where: { $0.name == other }) else {
                            throw line.error(file, "unknown field \"\(other)\" in rule; fields: \(fields.map(\.name).joined(separator: ", "))", offset: line.valueOffset(ofWord: other))
                        }
                    case .equals(let other), .notContaining(let other):
                        // At the field's name, not the rule's (helper-49).
                        guard fields.contains(where: { $0.name == other }) else {
                            throw line.error(file, "unknown field \"\(other)\" in rule; fields: \(fields.map(\.name).joined(separator: ", "))", offset: line.valueOffset(ofWord: other))
                        }
                        guard other != field.name else { throw line.error(file, "a field cannot be compared with itself", offset: line.valueOffset(ofWord: other)) }
                    case .username where kind != .username:
                        throw line.error(file, "rule username needs kind = username")
                    case .phone where kind != .phone:
                        throw line.error(file, "rule phone needs kind = phone")
                    case .email where kind != .email:
                        throw line.error(file, "rule email needs kind = email")
                    case .available where action == .login:
                        throw line.error(file, "a login form does not check availability (action = login)")
                    case .available where identityName != nil && identityName != field.name:
                        throw line.error(file, "only the identity field (identity = \(identityName ?? "?")) can be checked for availability")
                    default: break
                    }
                }
                for (spec, line) in field.rules where spec.messageID == nil {
                    for (id, _) in spec.rule.failureIDs(prefix: kind.messagePrefix) where !knowsMessage(FieldRule.resolveFailureID(id, knows: knowsMessage)) {
                        throw line.error(file, "this rule can fail with message id \"\(id)\", which the en catalogue does not have; add it (or \"\(FieldRule.resolveFailureID(id, knows: { _ in false }))\") to messages.d/en.messages, or write \"as ID\"")
                    }
                }
                if let (_, line) = field.rules.dropLast().first(where: { $0.0.rule == .available }) {
                    throw line.error(file, "available must be the last rule of a field (it runs after the others pass)")
                }
                if let (_, line) = field.rules.dropLast().first(where: { if case .passwordQuality = $0.0.rule { true } else { false } }) {
                    throw line.error(file, "password-quality must be the last rule of a field (it runs after the others pass)")
                }
                var labels = field.labels
                labels.removeValue(forKey: "en")
                return FieldDefinition(name: field.name, kind: kind, labels: LocalizedText(english, labels), rules: field.rules.map(\.0), okMessageID: field.ok)
            }
            if let definition { definitions.append(definition) } else { complete = false }
        }
        let identity = attempt { () throws(ConfigError) -> Int? in
            let (identityName, identityLine) = try required("identity")
            guard let identity = definitions.firstIndex(where: { $0.name == identityName }) else {
                // A field with its own error is not reported twice.
                if !complete, fields.contains(where: { $0.name == identityName }) { return nil }
                throw identityLine.error(file, "identity names no field: \"\(identityName)\"; fields: \(fields.map(\.name).joined(separator: ", "))")
            }
            let identityField = definitions[identity]
            guard let identityKind = identityField.kind.identityKind else {
                throw identityLine.error(file, "the identity field \"\(identityName)\" must be of kind username, phone or email, not \(identityField.kind.rawValue)")
            }
            let requiredRule: FieldRule = switch identityKind {
            case .username: .username
            case .phone: .phone(minDigits: 1, maxDigits: 30)
            case .email: .email
            }
            let hasRule = identityField.rules.contains { spec in
                switch (spec.rule, requiredRule) {
                case (.username, .username), (.phone, .phone), (.email, .email): true
                default: false
                }
            }
            guard hasRule else {
                throw identityLine.error(file, "the identity field \"\(identityName)\" needs \"rule = \(identityKind == .phone ? "phone MIN-DIGITS" : identityKind.rawValue)\": it defines the identity")
            }
            if identityField.checksAvailability, action == .login {
                throw identityLine.error(file, "a login form does not check availability; remove \"rule = available\" from \"\(identityName)\"")
            }
            if let other = definitions.first(where: { $0.checksAvailability && $0.name != identityName }) {
                throw identityLine.error(file, "only the identity field can be checked for availability, not \"\(other.name)\"")
            }
            return identity
        }
        let secret = attempt { () throws(ConfigError) -> Int? in
            let (secretName, secretLine) = try required("secret")
            guard let secret = definitions.firstIndex(where: { $0.name == secretName }) else {
                if !complete, fields.contains(where: { $0.name == secretName }) { return nil }
                throw secretLine.error(file, "secret names no field: \"\(secretName)\"; fields: \(fields.map(\.name).joined(separator: ", "))")
            }
            guard definitions[secret].kind == .secret else { throw secretLine.error(file, "the secret field \"\(secretName)\" must be of kind secret") }
            let bounded = definitions[secret].rules.contains { if case .maxBytes = $0.rule { true } else { false } }
            guard bounded else { throw secretLine.error(file, "the secret field \"\(secretName)\" needs \"rule = max-bytes N\" (at most 65536): passwords are hashed") }
            return secret
        }
        guard problems.isEmpty, let name, let action, let identity = identity ?? nil, let secret = secret ?? nil else { return nil }

        var titles = formValues.filter { $0.key.hasPrefix("title.") }.reduce(into: [String: String]()) { $0[String($1.key.dropFirst(6))] = $1.value.0 }
        var submits = formValues.filter { $0.key.hasPrefix("submit.") }.reduce(into: [String: String]()) { $0[String($1.key.dropFirst(7))] = $1.value.0 }
        let submit = formValues["submit"]!.0
        let title = formValues["title"]?.0 ?? submit
        titles.removeValue(forKey: "en")
        submits.removeValue(forKey: "en")
        return FormDefinition(
            name: name, titles: LocalizedText(title, titles), fields: definitions, submitLabels: LocalizedText(submit, submits),
            action: action, identityField: identity, secretField: secret
        )
    }

}
