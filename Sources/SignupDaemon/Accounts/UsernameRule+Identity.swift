import FormEngine
import Protocol
import UsernameIdentity

extension UsernameRule {
    /// The daemon's username rule: the identity function's (ICU), so that the form
    /// accepts exactly the names the stores, login and the limiter can key.
    static let identity = UsernameRule { name in
        switch Usernames.identity(of: name) {
        case .success: .valid
        case .failure(.invalidCharacters), .failure(.unavailable): .invalidCharacters
        case .failure(.invisibleCharacters): .invisibleCharacters
        case .failure(.tooLong): .tooLong
        case .failure(.tooManyBytes): .tooManyBytes
        case .failure(.mixedScripts): .mixedScripts
        }
    }
}

extension FormDefinition {
    /// The form's description with the username rule stated in full: normalisation,
    /// identity, confusables and the Unicode version of the linked ICU.
    var describedWithIdentity: FormDescription {
        var description = description
        for (index, field) in fields.enumerated() {
            guard case .username = field.rule, var rules = description.fields[index].rules else { continue }
            rules.normalization = "NFC"
            rules.identity = "NFKC_Casefold"
            rules.confusables = "UTS39-skeleton"
            rules.scriptRestriction = "UTS39-highly-restrictive+no-mixed-numbers"
            rules.unicodeVersion = Usernames.unicodeVersion
            description.fields[index].rules = rules
        }
        return description
    }
}
