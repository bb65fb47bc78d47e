/// Every user-visible message the engine produces, in one table so it can be localised.
public struct FormMessages: Sendable, Codable, Equatable {
    public var usernameInvalidCharacters = "Username can only contain letters or digits"
    public var usernameTooLong = "Username must be at most \(UsernameRules.maxLength) characters"
    public var usernameInvisibleCharacters = "Username cannot contain invisible characters"
    public var usernameTooManyBytes = "Username must be at most \(UsernameRules.maxBytes) bytes"
    public var usernameMixedScripts = "Username mixes scripts or number systems"
    public var usernameNoLetter = "Username must contain a letter or digit other than a modifier letter"
    public var usernameOverloadedCharacter = "Username characters can have at most \(UsernameRules.maxMarksPerCharacter) combining marks and \(UsernameRules.maxCodePointsPerCharacter) code points each"
    public var usernameBidiOrder = "Username with right-to-left letters must start with a letter and keep one direction"
    public var usernameTooSimilar = "Username is too similar to an existing one"
    public var usernameChecking = "Checking availability"
    public var usernameAvailable = "Username available"
    public var usernameTaken = "Username already taken"
    public var usernameValid = "Username valid"
    public var availabilityUnreachable = "Error contacting server"
    public var passwordTooShort = "Password must be at least \(PasswordRules.minLength) characters"
    public var passwordTooLong = "Password must be at most \(PasswordRules.maxLength) characters"
    public var passwordTooManyBytes = "Password must be at most \(PasswordRules.maxBytes) bytes"
    public var passwordAcceptable = "Password acceptable"
    public var passwordEntered = "Password entered"
    public var passwordRepeated = "Password repeated"
    public var passwordDifferent = "Password different"
    public var signedUp = "Signed up"
    public var loggedIn = "Logged in"
    public var invalidCredentials = "Invalid username or password"
    public var tooManyAttempts = "Too many attempts, try again later"
    public var storeUnavailable = "Account store unavailable, try again later"
    public var empty = ""

    public init() {}

    /// The engine's defaults, in English.
    public static let english = FormMessages()
}
