import Observation
import SignupProtocol

/// A ``SignupForm`` as an `@Observable` model for a UI to bind to: each output a property
/// that changes on the main actor.
///
/// ```swift
/// let model = SignupFormModel(form)
/// // SwiftUI: .task { await model.run() }
/// // Text(model.validation("username").message); Button(...).disabled(!model.enabled)
/// ```
@MainActor
@Observable
public final class SignupFormModel {
    /// The form it shows.
    @ObservationIgnored public let form: SignupForm
    /// Each field's validation, by name.
    public private(set) var fields: [String: FieldValidation]
    /// Whether submit is enabled (`signupEnabled`).
    public private(set) var enabled: Bool
    /// Whether the signup or login runs (`signingIn`).
    public private(set) var busy: Bool
    /// The last submit's outcome (`signedIn`).
    public private(set) var result: FormResult?
    /// The session's locale.
    public private(set) var locale: String?

    /// A model showing `form`, starting from its state now; ``run()`` keeps it up to date.
    public init(_ form: SignupForm) {
        self.form = form
        let state = form.state
        fields = state.fields
        enabled = state.enabled
        busy = state.busy
        result = state.result
        locale = state.locale
    }

    /// A field's validation (an empty one for a field signupd has not stated yet).
    public func validation(_ field: String) -> FieldValidation {
        fields[field] ?? FieldValidation(field: field)
    }

    /// Follows the form's changes until it ends (or the calling task is cancelled).
    public func run() async {
        let changes = form.changes()
        apply(form.state)  // whatever changed before the reader was registered
        for await change in changes { apply(change.kind) }
    }

    private func apply(_ state: FormState) {
        fields = state.fields
        enabled = state.enabled
        busy = state.busy
        result = state.result
        locale = state.locale
    }

    private func apply(_ change: FormChange.Kind) {
        switch change {
        case .validation(let validation): fields[validation.field] = validation
        case .enabled(let value): enabled = value
        case .busy(let value): busy = value
        case .result(let outcome): result = outcome
        case .locale(let value): locale = value
        case .closed: break
        }
    }
}
