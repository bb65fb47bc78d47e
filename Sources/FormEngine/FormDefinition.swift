import Protocol

/// How one field is validated.
public enum FieldRule: Sendable, Codable, Equatable {
    /// The configured `FormConfiguration.usernameRule` (letters and digits, no invisible
    /// characters, bounded characters and bytes); with `availabilityCheck`, a name that
    /// passes is then checked for availability.
    case username(availabilityCheck: Bool)
    /// A new password: at least 5 and at most 1024 characters.
    case newPassword
    /// Must equal the value of another field of the form.
    case repeats(field: String)
    /// Anything but empty.
    case required
}

/// One input of a form definition.
public struct FieldDefinition: Sendable, Codable, Equatable {
    public var name: String
    public var label: String
    public var secret: Bool
    public var rule: FieldRule

    public init(name: String, label: String, secret: Bool, rule: FieldRule) {
        self.name = name
        self.label = label
        self.secret = secret
        self.rule = rule
    }
}

/// What a successful submit asks the daemon to do.
public enum SubmitAction: String, Sendable, Codable {
    case signup
    case login
}

/// A form is data: its fields with their rules, and what submit does. Both of
/// signupd's forms run on the same engine.
public struct FormDefinition: Sendable, Codable, Equatable {
    public var name: String
    public var fields: [FieldDefinition]
    public var submitLabel: String
    public var action: SubmitAction

    public init(name: String, fields: [FieldDefinition], submitLabel: String, action: SubmitAction) {
        self.name = name
        self.fields = fields
        self.submitLabel = submitLabel
        self.action = action
    }

    /// The index of the field named `name`.
    public func index(of name: String) -> Int? {
        fields.firstIndex { $0.name == name }
    }

    /// The wire description of this form.
    public var description: FormDescription {
        FormDescription(
            name: name,
            fields: fields.map { FormDescription.Field(name: $0.name, secret: $0.secret, label: $0.label, rules: $0.rule.description) },
            submitLabel: submitLabel
        )
    }

    /// The sign-up form of the RxSwift GitHubSignup example.
    public static let signup = FormDefinition(
        name: "signup",
        fields: [
            FieldDefinition(name: "username", label: "Username", secret: false, rule: .username(availabilityCheck: true)),
            FieldDefinition(name: "password", label: "Password", secret: true, rule: .newPassword),
            FieldDefinition(name: "repeatedPassword", label: "Repeat password", secret: true, rule: .repeats(field: "password")),
        ],
        submitLabel: "Sign up",
        action: .signup
    )

    /// The login form of the RxSwift login demos.
    public static let login = FormDefinition(
        name: "login",
        fields: [
            FieldDefinition(name: "username", label: "Username", secret: false, rule: .username(availabilityCheck: false)),
            FieldDefinition(name: "password", label: "Password", secret: true, rule: .required),
        ],
        submitLabel: "Log in",
        action: .login
    )

    /// Every form signupd serves, in the order `describe` lists them.
    public static let all: [FormDefinition] = [.signup, .login]
}
