import SignupProtocol

/// The server-side view model of one form: a pure, synchronous state machine. Inputs go
/// in with the current time; events and effects come out. It does no I/O and reads no
/// clock, so every behaviour is reproducible in tests with a virtual clock. It knows no
/// form by name: everything it does follows from its `FormDefinition`.
public struct FormSession: Sendable, Codable, Equatable {
    /// An availability check in flight (at most one per session).
    struct PendingCheck: Sendable, Codable, Equatable {
        var id: UInt64
        var field: Int
        var value: String
        var deadline: Moment
    }

    /// Where the session is in its life. Being busy and finished at once is not representable.
    public enum Phase: Sendable, Codable, Equatable {
        /// Taking input; submit is enabled when every field is ok.
        case editing
        /// The form's action runs (a signup or login); it ends in `.editing` again or `.finished`.
        case submitting
        /// The action succeeded: no more input.
        case finished
    }

    public let form: FormDefinition
    public private(set) var values: [String]
    /// The UTF-8 bytes of all its values (what its session's memory counts).
    public var valueBytes: Int { values.reduce(0) { $0 + $1.utf8.count } }
    public private(set) var validations: [Validation]
    public private(set) var phase = Phase.editing
    /// A signup or login is running.
    public var busy: Bool { phase == .submitting }
    /// The action succeeded.
    public var finished: Bool { phase == .finished }
    /// Whether `submit` would be accepted now: derived, never stored.
    public var enabled: Bool { phase == .editing && paused == nil && validations.allSatisfy { $0.state == .ok } }
    /// Sign-up paused by the operator (signup forms only). The host's state, not the
    /// session's: not stored in a handover; the next process applies its own.
    public private(set) var paused: SignupPause?
    /// The locale messages are rendered in (resolved against the catalogues).
    public private(set) var locale: String
    /// The last result, re-rendered by a locale switch.
    public private(set) var lastResult: StoredResult?

    /// A result as kept for re-rendering (never its token).
    public struct StoredResult: Sendable, Codable, Equatable {
        public var ok: Bool
        public var message: MessageRef
        public var user: String?
    }
    var pendingCheck: PendingCheck?
    /// Password-quality checks in flight, at most one per field.
    var pendingQuality: [PendingCheck] = []
    var lastCheckID: UInt64 = 0
    /// The catalogues, rules and check timeout the session was opened with, fixed for its
    /// life (a reload of the host's configuration is for new sessions). The host's, not
    /// the session's: it is not part of the stored or compared state, and a restored
    /// session is given it again (`init(restoring:configuration:)`).
    public private(set) var configuration = FormConfiguration()
    /// What this session has shown, rendered in its locale (`RenderedOutcomes`): not stored
    /// or compared, like `configuration`.
    private var renderedOutcomes = RenderedOutcomes()

    /// The state that is stored (a handover) and compared: everything but `configuration`.
    /// `formIndex` stands for `form` in format version 3 (`HandoverFormTable`).
    /// `valueBytes` stands for `values` in version 3: base64, 4/3 of the UTF-8 bytes
    /// whatever they are (JSON wrote a control character as a 6-byte escape, and parsing
    /// such a state made a restart take seconds).
    enum CodingKeys: String, CodingKey {
        case form, formIndex, values, valueBytes, validations, phase, locale, lastResult, pendingCheck, pendingQuality, lastCheckID
    }

    /// A stored state as decoded (`init(from:)`, in HandoverFormTable.swift).
    init(
        decoded form: FormDefinition, values: [String], validations: [Validation], phase: Phase, locale: String, lastResult: StoredResult?,
        pendingCheck: PendingCheck?, pendingQuality: [PendingCheck], lastCheckID: UInt64
    ) {
        self.form = form
        self.values = values
        self.validations = validations
        self.phase = phase
        self.locale = locale
        self.lastResult = lastResult
        self.pendingCheck = pendingCheck
        self.pendingQuality = pendingQuality
        self.lastCheckID = lastCheckID
    }

    public init(form: FormDefinition, locale: String = "en", configuration: FormConfiguration = FormConfiguration()) {
        self.form = form
        self.locale = locale
        self.configuration = configuration
        values = Array(repeating: "", count: form.fields.count)
        validations = Array(repeating: .empty, count: form.fields.count)
    }

    /// A session stored by another process (a handover), with this host's configuration.
    public init(restoring state: FormSession, configuration: FormConfiguration) {
        self = state
        self.configuration = configuration
        renderedOutcomes = RenderedOutcomes()
    }

    /// Equal state; the configuration (closures, catalogues) is the host's and not compared.
    public static func == (a: FormSession, b: FormSession) -> Bool {
        a.form == b.form && a.values == b.values && a.validations == b.validations && a.phase == b.phase && a.locale == b.locale
            && a.lastResult == b.lastResult && a.pendingCheck == b.pendingCheck && a.pendingQuality == b.pendingQuality && a.lastCheckID == b.lastCheckID
    }

    /// The full state as events: one validation per field in form order, then enabled, then busy.
    public func snapshot() -> [SessionEvent] {
        var events = zip(form.fields, validations).map { field, validation in
            SessionEvent.validation(field: field.name, state: validation.state, message: rendered(validation.message))
        }
        events.append(.enabled(enabled))
        events.append(.busy(busy))
        // A session opened (or looked at again) while sign-up is paused is told why submit is off.
        if let paused, phase == .editing {
            events.append(.result(ok: false, message: rendered(paused.message), user: nil, token: nil))
        }
        return events
    }

    /// Applies one input at time `now`.
    public mutating func handle(_ input: FormInput, now: Moment) throws(FormError) -> FormStep {
        var step = FormStep()
        let wasEnabled = enabled
        try apply(input, now: now, into: &step)
        // `enabled` is announced only when it flips, as the last event of the step.
        if enabled != wasEnabled { step.events.append(.enabled(enabled)) }
        return step
    }

    private mutating func apply(_ input: FormInput, now: Moment, into step: inout FormStep) throws(FormError) {
        switch input {
        case .set(let name, let value):
            guard let index = form.index(of: name) else { throw .unknownField(name) }
            guard !finished else { throw .finished }
            let cap = form.inputByteCap(of: index)
            guard value.utf8.count <= cap else { throw .valueTooLong(field: name, maxBytes: cap) }
            guard !values[index].hasSameUTF8(as: value) else { return }
            values[index] = value
            revalidate(changed: index, now: now, into: &step)
        case .submit:
            guard !finished else { throw .finished }
            // Paused: the same answer as a paused signup, not "not ready".
            if let paused, phase == .editing {
                step.events.append(.result(ok: false, message: rendered(paused.message), user: nil, token: nil))
                return
            }
            guard enabled else { throw .notReady }
            phase = .submitting
            step.events.append(.busy(true))
            let identity = form.identity(values[form.identityField])
            step.effects.append(.submit(form.action, identity: identity, password: values[form.secretField]))
        case .setLocale(let tag):
            locale = configuration.catalogues.resolve(tag)
            renderedOutcomes = RenderedOutcomes()
            step.events = snapshot()
            // While paused the snapshot ends with the pause, which stands over an older result.
            if let result = lastResult, !(paused != nil && phase == .editing) {
                step.events.append(.result(ok: result.ok, message: configuration.catalogues.render(result.message, locale: locale), user: result.user, token: nil))
            }
        case .availability(let id, let availability):
            guard let check = pendingCheck, check.id == id else { return }  // stale: never emitted
            pendingCheck = nil
            let prefix = form.fields[check.field].messagePrefix
            let validation = switch availability {
            case .available: Validation(.ok, MessageRef("\(prefix).available"))
            case .taken: Validation(.failed, MessageRef("\(prefix).taken"))
            case .tooSimilar: Validation(.failed, MessageRef("\(prefix).too_similar"))
            case .unreachable: Validation(.failed, MessageRef("availability.unreachable"))
            }
            setValidation(validation, at: check.field, into: &step)
        case .passwordChecked(let id, let failure):
            guard let index = pendingQuality.firstIndex(where: { $0.id == id }) else { return }  // stale
            let check = pendingQuality.remove(at: index)
            let validation = failure.map { Validation(.failed, MessageRef("password.quality.\($0.verdict.rawValue)", $0.params)) }
                ?? Validation(.ok, MessageRef(form.fields[check.field].okMessageID))
            setValidation(validation, at: check.field, into: &step)
        case .submitCompleted(let outcome):
            guard busy else { return }
            complete(outcome, into: &step)
        case .signupsPaused(let pause):
            guard form.action == .signup, paused != pause else { return }
            paused = pause
            if let pause, phase == .editing {
                step.events.append(.result(ok: false, message: rendered(pause.message), user: nil, token: nil))
            }
        case .tick:
            guard let check = pendingCheck, check.deadline <= now else { return }
            pendingCheck = nil
            step.effects.append(.cancelCheck(id: check.id))
            setValidation(Validation(.failed, MessageRef("availability.unreachable")), at: check.field, into: &step)
        }
    }

    /// The deadline of the check in flight, which the shell must report with `.tick`.
    public var nextDeadline: Moment? { pendingCheck?.deadline }

    /// Whether a check (availability or password quality) awaits its answer.
    public var hasPendingCheck: Bool { pendingCheck != nil || !pendingQuality.isEmpty }

    /// Whether the password-quality check `id` still awaits its answer (a newer value has
    /// not made it stale), so the shell can skip work nobody wants.
    public func awaitsPasswordCheck(_ id: UInt64) -> Bool { pendingQuality.contains { $0.id == id } }

    private mutating func revalidate(changed: Int, now: Moment, into step: inout FormStep) {
        // The fields are read in place, not copied one by one (a copy of a field retains
        // each of its strings and arrays, on every keystroke), and what they would answer
        // the same every time is asked of the form's plan (`FieldPlan`).
        let plan = form.plan
        for index in plan[changed].revalidates {
            // The field is read where it is: a copy would retain its strings and arrays,
            // which every session of the form shares (on every event loop).
            let outcome = form.fields[index].outcome(
                of: values[index], checked: plan[index].checksAvailability || plan[index].checksQuality,
                valueOf: { name in form.index(of: name).map { values[$0] } ?? "" }, configuration: configuration
            )
            let (validation, message) = shown(outcome, of: index)
            if plan[index].checksAvailability {
                // flatMapLatest: whatever the new value, the old check's answer is no longer wanted.
                if index != changed, validation.state == .validating {
                    // Only a field it depends on changed: the value's check (in flight or
                    // answered) still stands, unless a rule had failed it before.
                    let current = validations[index]
                    let prefix = form.fields[index].messagePrefix
                    let fromCheck = current.state == .validating || current.state == .ok
                        || ["\(prefix).taken", "\(prefix).too_similar", "availability.unreachable"].contains(current.message.id)
                    if fromCheck { continue }
                }
                if let check = pendingCheck, check.field == index {
                    pendingCheck = nil
                    step.effects.append(.cancelCheck(id: check.id))
                }
                if validation.state == .validating {
                    lastCheckID += 1
                    let check = PendingCheck(id: lastCheckID, field: index, value: values[index], deadline: now + configuration.checkTimeout)
                    pendingCheck = check
                    step.effects.append(.startCheck(id: check.id, identity: form.identity(check.value), deadline: check.deadline))
                }
            }
            if plan[index].checksQuality {
                // A newer value (or user name): the older answer is stale, and ignored.
                pendingQuality.removeAll { $0.field == index }
                if validation.state == .validating {
                    lastCheckID += 1
                    pendingQuality.append(PendingCheck(id: lastCheckID, field: index, value: values[index], deadline: now))
                    let user = form.fields[index].qualityUserField.flatMap { form.index(of: $0) }.map { values[$0] } ?? ""
                    step.effects.append(.checkPassword(id: lastCheckID, password: values[index], user: user))
                }
            }
            setValidation(validation, at: index, message: message, into: &step)
        }
    }

    /// The validation an outcome of field `index` shows, with its rendered message when
    /// the session keeps it (`RenderedOutcomes`: rendered once, the first time it is shown).
    private mutating func shown(_ outcome: FieldOutcome, of index: Int) -> (Validation, LocalizedMessage?) {
        guard let offset = outcome.keptOffset else {
            if case .failed(let validation) = outcome { return (validation, nil) }
            return (.empty, .empty)
        }
        let slot = form.plan[index].firstKept + offset
        if let kept = renderedOutcomes.index(of: slot) { return renderedOutcomes[kept] }
        let validation = form.fields[index].validation(of: outcome, catalogues: configuration.catalogues)
        let message = rendered(validation.message)
        renderedOutcomes.keep(slot: slot, validation, message)
        return (validation, message)
    }

    private mutating func complete(_ outcome: SubmitOutcome, into step: inout FormStep) {
        phase = .editing
        let prefix = form.fields[form.identityField].messagePrefix
        func result(_ ok: Bool, _ message: MessageRef, user: String? = nil, token: String? = nil) {
            lastResult = StoredResult(ok: ok, message: message, user: user)
            step.events.append(.result(ok: ok, message: configuration.catalogues.render(message, locale: locale), user: user, token: token))
        }
        switch outcome {
        case .signedUp(let user):
            phase = .finished
            result(true, MessageRef("signup.done"), user: user)
        case .loggedIn(let user, let token):
            phase = .finished
            result(true, MessageRef("login.done"), user: user, token: token)
        case .usernameTaken, .usernameTooSimilar:
            let message = MessageRef(outcome == .usernameTaken ? "\(prefix).taken" : "\(prefix).too_similar")
            result(false, message)
            // The name was free when checked but lost the race: show it on the field too.
            if form.fields[form.identityField].checksAvailability, pendingCheck == nil {
                setValidation(Validation(.failed, message), at: form.identityField, into: &step)
            }
        case .invalidCredentials:
            result(false, MessageRef("\(prefix).invalid_credentials"))
        case .rateLimited:
            result(false, MessageRef("login.rate_limited"))
        case .storeUnavailable:
            result(false, MessageRef("store.unavailable"))
        case .signupsPaused(let note):
            result(false, SignupPause(note: note).message)
        }
        // Paused while this submit ran and it failed for another reason: the pause is what
        // stands now (submit stays off), so it is said last.
        var saidPause = false
        if case .signupsPaused = outcome { saidPause = true }
        if let paused, phase == .editing, !saidPause {
            step.events.append(.result(ok: false, message: rendered(paused.message), user: nil, token: nil))
        }
        step.events.append(.busy(false))
    }

    /// `message`: the validation's, rendered already (else it is rendered here).
    private mutating func setValidation(_ validation: Validation, at index: Int, message: LocalizedMessage? = nil, into step: inout FormStep) {
        guard validations[index] != validation else { return }
        validations[index] = validation
        step.events.append(.validation(field: form.fields[index].name, state: validation.state, message: message ?? rendered(validation.message)))
    }

    /// The message in the session's locale, where the `field` parameter (another field's
    /// name) reads as that field's label there: "Must equal Password", "密码不能包含邮箱".
    /// `params` keep the name, the same in every locale, for clients that translate.
    func rendered(_ message: MessageRef) -> LocalizedMessage {
        var text = configuration.catalogues.render(labelled(message), locale: locale)
        text.params = message.params
        return text
    }

    func labelled(_ message: MessageRef) -> MessageRef {
        guard message.params.contains(where: { $0.name == "field" }) else { return message }
        var result = message
        result.params = message.params.map { parameter in
            guard parameter.name == "field", case .string(let name) = parameter.value, let index = form.index(of: name) else { return parameter }
            return .init("field", .string(form.fields[index].labels.text(for: locale)))
        }
        return result
    }

}

