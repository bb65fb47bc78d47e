import FormEngine
import UsernameIdentity

/// The store's identity of what a form submits. Usernames are `UsernameIdentity`'s;
/// phone numbers (`tel:` and their digits) and e-mail addresses (`mailto:` and the
/// address) share the same table, where the scheme keeps them apart from each other and
/// from usernames (which cannot contain ":"). Their keys are what the stores already
/// compute for a stored name, so a key recomputation (another ICU) leaves them unchanged.
enum AccountIdentity {
    static func of(_ identity: IdentityValue) -> UsernameIdentity? {
        switch identity.kind {
        case .username:
            return try? Usernames.identity(of: identity.value).get()
        case .phone:
            guard let digits = PhoneNumbers.digits(of: identity.value), !digits.isEmpty, digits.utf8.count <= 30 else { return nil }
            return Usernames.storedIdentity(of: "tel:" + digits, legacyKey: "tel:" + digits)
        case .email:
            guard EmailAddresses.isValid(identity.value) else { return nil }
            let stored = "mailto:" + identity.value
            return Usernames.storedIdentity(of: stored, legacyKey: stored.lowercased())
        }
    }
}
