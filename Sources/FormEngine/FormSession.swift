import Protocol

/// The server-side view model of one form: a pure, synchronous state machine. Inputs go
/// in with the current time; events and effects come out. It does no I/O and reads no
/// clock, so every behaviour is reproducible in tests with a virtual clock.
public struct FormSession: Sendable, Codable, Equatable {
    /// An availability check in flight (at most one per session).
    struct PendingCheck: Sendable, Codable, Equatable {
        var id: UInt64
        var field: Int
        var username: String
        var deadline: Moment
    }

    public let form: FormDefinition
    public private(set) var values: [String]
    public private(set) var validations: [Validation]
    public private(set) var busy = false
    public private(set) var finished = false
    public private(set) var enabled = false
    var pendingCheck: PendingCheck?
    var lastCheckID: UInt64 = 0

    public init(form: FormDefinition) {
        self.form = form
        values = Array(repeating: "", count: form.fields.count)
        validations = Array(repeating: .empty, count: form.fields.count)
    }

    /// The full state as events: one validation per field in form order, then enabled, then busy.
    public func snapshot() -> [SessionEvent] {
        var events = zip(form.fields, validations).map { field, validation in
            SessionEvent.validation(field: field.name, state: validation.state, message: validation.message)
        }
        events.append(.enabled(enabled))
        events.append(.busy(busy))
        return events
    }

    /// Applies one input at time `now`.
    public mutating func handle(
        _ input: FormInput,
        now: Moment,
        configuration: FormConfiguration = FormConfiguration()
    ) throws(FormError) -> FormStep {
        var step = FormStep()
        switch input {
        case .set(let name, let value):
            guard let index = form.index(of: name) else { throw .unknownField(name) }
            guard !finished else { throw .finished }
            guard !values[index].utf8.elementsEqual(value.utf8) else { return step }
            values[index] = value
            revalidate(changed: index, now: now, configuration: configuration, into: &step)
        case .submit:
            guard !finished else { throw .finished }
            guard enabled else { throw .notReady }
            busy = true
            step.events.append(.busy(true))
            updateEnabled(into: &step)
            let usernameIndex = form.fields.firstIndex { if case .username = $0.rule { true } else { false } } ?? 0
            let passwordIndex = form.index(of: "password") ?? 1
            step.effects.append(.submit(form.action, username: values[usernameIndex], password: values[passwordIndex]))
        case .availability(let id, let availability):
            guard let check = pendingCheck, check.id == id else { return step }  // stale: never emitted
            pendingCheck = nil
            let messages = configuration.messages
            let validation = switch availability {
            case .available: Validation(.ok, messages.usernameAvailable)
            case .taken: Validation(.failed, messages.usernameTaken)
            case .tooSimilar: Validation(.failed, messages.usernameTooSimilar)
            case .unreachable: Validation(.failed, messages.availabilityUnreachable)
            }
            setValidation(validation, at: check.field, into: &step)
            updateEnabled(into: &step)
        case .submitCompleted(let outcome):
            guard busy else { return step }
            complete(outcome, configuration: configuration, into: &step)
        case .tick:
            guard let check = pendingCheck, check.deadline <= now else { return step }
            pendingCheck = nil
            step.effects.append(.cancelCheck(id: check.id))
            setValidation(Validation(.failed, configuration.messages.availabilityUnreachable), at: check.field, into: &step)
            updateEnabled(into: &step)
        }
        return step
    }

    /// The deadline of the check in flight, which the shell must report with `.tick`.
    public var nextDeadline: Moment? { pendingCheck?.deadline }

    private mutating func revalidate(changed: Int, now: Moment, configuration: FormConfiguration, into step: inout FormStep) {
        for (index, field) in form.fields.enumerated() {
            let dependsOnChange: Bool = switch field.rule {
            case .repeats(let other): index == changed || form.index(of: other) == changed
            default: index == changed
            }
            guard dependsOnChange else { continue }
            let validation = field.rule.evaluate(values[index], valueOf: { name in form.index(of: name).map { values[$0] } ?? "" }, configuration: configuration)
            if case .username(availabilityCheck: true) = field.rule {
                // flatMapLatest: whatever the new value, the old check's answer is no longer wanted.
                if let check = pendingCheck, check.field == index {
                    pendingCheck = nil
                    step.effects.append(.cancelCheck(id: check.id))
                }
                if validation.state == .validating {
                    lastCheckID += 1
                    let check = PendingCheck(id: lastCheckID, field: index, username: values[index], deadline: now + configuration.checkTimeout)
                    pendingCheck = check
                    step.effects.append(.startCheck(id: check.id, username: check.username, deadline: check.deadline))
                }
            }
            setValidation(validation, at: index, into: &step)
        }
        updateEnabled(into: &step)
    }

    private mutating func complete(_ outcome: SubmitOutcome, configuration: FormConfiguration, into step: inout FormStep) {
        let messages = configuration.messages
        busy = false
        switch outcome {
        case .signedUp(let user):
            finished = true
            step.events.append(.result(ok: true, message: messages.signedUp, user: user, token: nil))
        case .loggedIn(let user, let token):
            finished = true
            step.events.append(.result(ok: true, message: messages.loggedIn, user: user, token: token))
        case .usernameTaken, .usernameTooSimilar:
            let message = outcome == .usernameTaken ? messages.usernameTaken : messages.usernameTooSimilar
            step.events.append(.result(ok: false, message: message, user: nil, token: nil))
            // The name was free when checked but lost the race: show it on the field too.
            if let index = form.fields.firstIndex(where: { $0.rule == .username(availabilityCheck: true) }), pendingCheck == nil {
                setValidation(Validation(.failed, message), at: index, into: &step)
            }
        case .invalidCredentials:
            step.events.append(.result(ok: false, message: messages.invalidCredentials, user: nil, token: nil))
        case .rateLimited:
            step.events.append(.result(ok: false, message: messages.tooManyAttempts, user: nil, token: nil))
        case .storeUnavailable:
            step.events.append(.result(ok: false, message: messages.storeUnavailable, user: nil, token: nil))
        }
        step.events.append(.busy(false))
        updateEnabled(into: &step)
    }

    private mutating func setValidation(_ validation: Validation, at index: Int, into step: inout FormStep) {
        guard validations[index] != validation else { return }
        validations[index] = validation
        step.events.append(.validation(field: form.fields[index].name, state: validation.state, message: validation.message))
    }

    private mutating func updateEnabled(into step: inout FormStep) {
        let value = !busy && !finished && validations.allSatisfy { $0.state == .ok }
        guard value != enabled else { return }
        enabled = value
        step.events.append(.enabled(value))
    }
}
