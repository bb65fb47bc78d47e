import FormEngine
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
        case .failure(.noLetter): .noLetter
        case .failure(.overloadedCharacter): .overloadedCharacter
        case .failure(.bidiOrder): .bidiOrder
        }
    }
}
