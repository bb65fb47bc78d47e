import FormEngine
import UsernameIdentity

extension UsernameRule {
    /// The daemon's username rule: the identity function's (ICU), so that the form
    /// accepts exactly the names the stores, login and the limiter can key.
    static let identity = UsernameRule { name in
        switch Usernames.rejection(of: name) {
        case nil: .valid
        case .invalidCharacters, .unavailable: .invalidCharacters
        case .invisibleCharacters: .invisibleCharacters
        case .tooLong: .tooLong
        case .tooManyBytes: .tooManyBytes
        case .mixedScripts: .mixedScripts
        case .noLetter: .noLetter
        case .overloadedCharacter: .overloadedCharacter
        case .bidiOrder: .bidiOrder
        }
    }
}
