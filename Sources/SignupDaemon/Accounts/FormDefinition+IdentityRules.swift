import FormEngine
import Protocol
import UsernameIdentity

extension FormDefinition {
    /// The form's description with the username rule stated in full: normalisation,
    /// identity, confusables and the Unicode version of the linked ICU.
    func describedWithIdentity(locale: String) -> FormDescription {
        var description = description(locale: locale)
        for (index, field) in fields.enumerated() {
            guard field.rules.contains(where: { $0.rule == .username }), var rules = description.fields[index].rules else { continue }
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
