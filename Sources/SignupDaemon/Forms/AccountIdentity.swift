import FormEngine
import UsernameIdentity

/// The store's identity of what a form submits. Usernames are `UsernameIdentity`'s;
/// phone numbers (`tel:` and their E.164 form, `PhoneIdentity`) and e-mail addresses (`mailto:` and the
/// address) share the same table, where the scheme keeps them apart from each other and
/// from usernames (which cannot contain ":"). Their keys are what the stores already
/// compute for a stored name, so a key recomputation (another ICU) leaves them unchanged.
enum AccountIdentity {
    static func of(_ identity: IdentityValue) -> UsernameIdentity? {
        switch identity.kind {
        case .username:
            return try? Usernames.identity(of: identity.value).get()
        case .phone:
            guard let stored = PhoneIdentity.stored(identity.value, region: identity.region) else { return nil }
            // The key numbers had before they were E.164 (`tel:` and the digits as typed):
            // of two accounts that now name one number, each logs in as it was written.
            return Usernames.storedIdentity(of: stored, legacyKey: PhoneIdentity.legacyKey(identity.value))
        case .email:
            guard EmailAddresses.isValid(identity.value) else { return nil }
            let stored = "mailto:" + identity.value
            return Usernames.storedIdentity(of: stored, legacyKey: stored.lowercased())
        }
    }
}
