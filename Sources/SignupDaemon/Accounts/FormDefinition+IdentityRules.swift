import FormEngine
import SignupProtocol
import UsernameIdentity

extension FormDefinition {
    /// The form's description with the username rule stated in full: normalisation,
    /// identity, confusables and the Unicode version of the linked ICU.
    func describedWithIdentity(locale: String) -> FormDescription {
        var description = description(locale: locale)
        for (index, field) in fields.enumerated() {
            guard field.rules.contains(where: { $0.rule == .username }), var rules = description.fields[index].rules else { continue }
            rules.maxInputBytes = Usernames.maxInputBytes
            rules.normalization = "NFC"
            rules.appliesTo = ["NFC", "NFKC_Casefold"]
            rules.allowedCategories = ["Lu", "Ll", "Lt", "Lm", "Lo", "Nd", "Mn", "Mc"]
            rules.refusedCodePoints = ["U+0640"]
            rules.requiredCategories = ["Lu", "Ll", "Lt", "Lo", "Nd"]
            rules.combiningMarks = "after-letter-of-its-script"
            rules.maxMarksPerCharacter = Usernames.maxMarksPerCharacter
            rules.maxCodePointsPerCharacter = Usernames.maxCodePointsPerCharacter
            rules.bidiRule = "RFC5893"
            rules.identity = "NFKC_Casefold"
            rules.confusables = "UTS39-similarity-keys"
            rules.scriptRestriction = "UTS39-highly-restrictive+no-mixed-numbers"
            rules.unicodeVersion = Usernames.unicodeVersion
            description.fields[index].rules = rules
        }
        return description
    }
}
