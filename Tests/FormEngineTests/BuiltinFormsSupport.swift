import FormEngine
import SignupProtocol

/// The built-in forms by name, as the daemon reads them (from their definition files).
extension FormDefinition {
    static var signup: FormDefinition { FormLibrary.builtin.form(named: "signup")! }
    static var login: FormDefinition { FormLibrary.builtin.form(named: "login")! }
    static var phoneSignup: FormDefinition { FormLibrary.builtin.form(named: "phone-signup")! }
    static var phoneLogin: FormDefinition { FormLibrary.builtin.form(named: "phone-login")! }
}

/// A field's state as a user sees it in English: state and text.
struct Shown: Equatable, CustomStringConvertible {
    var state: ValidationState
    var message: String

    init(_ state: ValidationState, _ message: String) {
        self.state = state
        self.message = message
    }

    static let empty = Shown(.empty, "")
    var description: String { "\(state.rawValue): \(message)" }
}

extension FormSession {
    /// Field `index` as shown in English.
    func shown(_ index: Int) -> Shown {
        let validation = validations[index]
        return Shown(validation.state, MessageCatalogues.builtin.render(validation.message, locale: "en").text)
    }
}

/// Tests write messages by their text; ids are checked where they matter.
extension LocalizedMessage: ExpressibleByStringLiteral {
    public init(stringLiteral value: String) {
        self.init(id: "", text: value)
    }
}

extension SessionEvent {
    /// The event with its message reduced to the text (ids and params dropped).
    var textOnly: SessionEvent {
        switch self {
        case .validation(let field, let state, let message): .validation(field: field, state: state, message: LocalizedMessage(id: "", text: message.text))
        case .result(let ok, let message, let user, let token): .result(ok: ok, message: LocalizedMessage(id: "", text: message.text), user: user, token: token)
        case .enabled, .busy: self
        }
    }
}

extension Array where Element == SessionEvent {
    var textOnly: [SessionEvent] { map(\.textOnly) }
}
