import FormEngine
import SignupProtocol

/// Drives a `FormSession` on a virtual clock, playing the daemon's part: availability
/// checks are answered `checkDelay` ticks after they are asked (from `answers`), and
/// every emitted event is logged with the tick it happened at.
struct VirtualClockHarness {
    static let tick = Duration.milliseconds(200)

    var session: FormSession
    var now = 0
    var checkDelay = 3
    /// Answers by username; a name not listed is available.
    var answers: [String: Availability] = [:]
    /// When true, answers of cancelled checks are still delivered (to prove they are ignored).
    var deliverCancelledAnswers = false
    private(set) var scheduled: [(tick: Int, id: UInt64, answer: Availability)] = []
    private(set) var log: [(tick: Int, event: SessionEvent)] = []
    private(set) var effects: [(tick: Int, effect: FormEffect)] = []

    init(form: FormDefinition, locale: String = "en", configuration: FormConfiguration = FormConfiguration()) {
        session = FormSession(form: form, locale: locale, configuration: configuration)
        log = session.snapshot().map { (0, $0) }
    }

    var moment: Moment { Moment(nanoseconds: Int64(now) * 200_000_000) }

    mutating func send(_ input: FormInput) throws(FormError) {
        let step = try session.handle(input, now: moment)
        for event in step.events { log.append((now, event)) }
        for effect in step.effects {
            effects.append((now, effect))
            switch effect {
            case .startCheck(let id, let identity, _):
                scheduled.append((now + checkDelay, id, answers[identity.value] ?? .available))
            case .cancelCheck(let id):
                if !deliverCancelledAnswers { scheduled.removeAll { $0.id == id } }
            case .checkPassword(let id, let password, let user):
                // A local library call: answered at once, with the configured check.
                try send(.passwordChecked(check: id, session.configuration.passwordQuality.check(password, user)))
            case .submit:
                break
            }
        }
    }

    /// Advances the clock to `tick`, delivering due answers and ticks along the way.
    mutating func advance(to tick: Int) {
        while now < tick {
            now += 1
            let due = scheduled.filter { $0.tick == now }
            scheduled.removeAll { $0.tick == now }
            for answer in due { try! send(.availability(check: answer.id, answer.answer)) }
            try! send(.tick)
        }
    }

    /// The logged validation events of one field, as (tick, state, message).
    func validations(of field: String) -> [(Int, ValidationState, String)] {
        log.compactMap { entry in
            if case .validation(field, let state, let message) = entry.event { return (entry.tick, state, message.text) }
            return nil
        }
    }

    /// The logged `enabled` events, as (tick, value).
    var enabledChanges: [(Int, Bool)] {
        log.compactMap { entry in
            if case .enabled(let value) = entry.event { return (entry.tick, value) }
            return nil
        }
    }
}
