import FormEngine
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import SignupProtocol
import Synchronization

/// One live form session: the pure `FormSession` plus the shell that performs its
/// effects and fans its events out to the connections holding it.
///
/// Confined to `eventLoop` (the opening connection's): every method must run there,
/// which is what makes it `@unchecked Sendable`. Every entry point, the callbacks of its
/// timers and checks included, checks it with `preconditionInEventLoop` (release builds too).
final class Session: @unchecked Sendable {
    let id: String
    let eventLoop: EventLoop
    /// Who opened it (uid, and client for a front end's connection): `sessions`, `attach`
    /// and `resume` answer only the same owner, and its budgets are this peer's.
    let principal: Principal
    /// The secret `opened` carried: `resume` with it takes the session back after its
    /// opener's connection dropped (`--resume-grace`).
    let resumeSecret: String
    /// Since when no connection has held it as opener (its connection dropped), for
    /// `sessions`; readable from any thread. nil while its opener holds it.
    private let detached = NIOLockedValueBox<NIODeadline?>(nil)
    /// Closes it when nobody resumed it within the grace.
    private var graceTask: Scheduled<Void>?
    /// A `result` that arrived while no connection held it as opener: `resume` delivers it,
    /// token included.
    private var undeliveredResult: SessionEvent?
    /// When `open` created it (for `sessions`).
    let openedAt: NIODeadline
    /// How many connections are attached besides the opener; read from any thread.
    private let viewCount = NIOLockedValueBox(0)
    /// The form's name; fixed at open, so readable from any thread.
    let formName: String
    private var state: FormSession
    /// What it counts in `services.sessionBytes`: `SessionBytesState.perSession` plus what
    /// it reserves for its values (`SessionBytesState.reservation`); given back when it ends.
    private var heldBytes = SessionBytesState.perSession
    private var seq: UInt64 = 0
    /// The opener's hold (nil while detached: its connection dropped and nobody resumed it yet).
    private var owner: SessionHold?
    /// The connections attached besides the opener, in the order they attached.
    private var viewers: [SessionHold] = []
    private var deadlineTask: Scheduled<Void>?
    /// When a connection last sent the session a request (`--session-idle-timeout`), and
    /// the one timer that looks at it: rescheduled when it fires early, not per request.
    private var lastRequest: NIODeadline
    /// Its idle check, on its loop's `LoopTimers` (a NIO task per session made every end of a
    /// session search all the others').
    private var idleCheck: LoopTimers.Token?
    /// Set while the check deadline's tick is fed: a check it cancels timed out.
    private var timingOut = false
    /// The availability check in flight (at most one per session) and the newest value
    /// waiting to be checked after it: a burst of `set`s costs one check at a time, each
    /// superseded one is cancelled, and the latest value is checked next.
    private var checkInFlight: (id: UInt64, cancellation: CheckCancellation)?
    private var nextCheck: (id: UInt64, identity: IdentityValue)?
    /// True while the check in flight waits for the availability budget: its timeout
    /// (the engine's deadline) runs only from when it really starts, so a delayed check
    /// is answered, not reported as "Error contacting server".
    private var checkWaitingForBudget = false
    /// The turn it waits for: cancelled when the session closes, so that a closed session
    /// is freed at once, not when a uid's deep budget debt would have reached it (a flood of
    /// 4,096 sessions kept every one, values and all, for minutes).
    private var budgetWait: Scheduled<Void>?
    /// Password-quality checks (libpwquality, off the event loop): one in flight per
    /// session, the rest waiting; a check a newer value made stale never runs.
    private var passwordCheckInFlight = false
    private var passwordChecks: [(id: UInt64, password: String, user: String)] = []
    /// This session's share of `services.checkBudget`.
    private var checkBucket: TokenBucket
    private let services: SessionServices
    /// `signupd_validation_seconds` of this session's form.
    private let validationTimer: LoopHistogram.Shard
    /// The forms' catalogues and rules as they were at open (a reload does not change
    /// them): the engine's, fixed when it was made.
    private var configuration: FormConfiguration { state.configuration }
    /// Set once, on the session's loop, when it ends; read there and by the hash queue's
    /// threads (a hash nobody waits for any more is skipped).
    private let closedFlag = ClosedFlag()
    var isClosed: Bool {
        eventLoop.preconditionInEventLoop()
        return closedFlag.isSet
    }

    init(id: String, form: FormDefinition, locale: String, owner: ConnectionOutput, services: SessionServices) {
        self.id = id
        eventLoop = owner.eventLoop
        principal = owner.principal
        resumeSecret = ResumeSecret.generate()
        formName = form.name
        let configuration = services.currentFormConfiguration
        state = FormSession(form: form, locale: configuration.catalogues.resolve(locale), configuration: configuration)
        self.services = services
        validationTimer = services.metrics.validation(form: form.name, on: eventLoop)
        // Opened while sign-up is paused: its snapshot says so.
        _ = try? state.handle(.signupsPaused(services.signupPause.forForms), now: services.clock.moment)
        openedAt = services.clock.now()
        lastRequest = openedAt
        checkBucket = services.checkBudget.sessionBucket(now: openedAt)
        self.owner = SessionHold(self, owner, isOwner: true)
        scheduleIdleCheck(after: services.sessionIdleTimeout)
    }

    // MARK: Handover (issue 16): carrying the session to the next process.

    /// A session the previous process handed over: its engine state and `seq` as they were,
    /// held by the same connections, with today's catalogues.
    /// `age` is how long it had been open then (for `list`), by the injected clock.
    /// `owner` nil: it was detached (`detachedFor` ago), waiting for `resume` on `eventLoop`.
    init(
        restoring id: String, state: FormSession, seq: UInt64, age: TimeAmount, principal: Principal, resumeSecret: String?,
        owner: ConnectionOutput?, detachedFor: TimeAmount?, views: [ConnectionOutput], eventLoop: EventLoop, services: SessionServices
    ) {
        self.id = id
        self.eventLoop = owner?.eventLoop ?? eventLoop
        self.principal = principal
        self.resumeSecret = resumeSecret ?? ResumeSecret.generate()
        formName = state.form.name
        self.state = FormSession(restoring: state, configuration: services.currentFormConfiguration)
        self.seq = seq
        self.services = services
        validationTimer = services.metrics.validation(form: state.form.name, on: self.eventLoop)
        // The pause is this host's state, not the session's: applied again here.
        _ = try? self.state.handle(.signupsPaused(services.signupPause.forForms), now: services.clock.moment)
        let now = services.clock.now()
        openedAt = now - age
        // The idle time starts again in the new process.
        lastRequest = now
        checkBucket = services.checkBudget.sessionBucket(now: now)
        heldBytes = SessionBytesState.perSession + SessionBytesState.reservation(for: state.valueBytes, reserved: 0)
        services.sessionBytes.adopt(heldBytes, peer: principal.key)
        self.owner = owner.map { SessionHold(self, $0, isOwner: true) }
        viewers = views.map { SessionHold(self, $0, isOwner: false) }
        viewCount.withLockedValue { $0 = views.count }
        scheduleIdleCheck(after: services.sessionIdleTimeout)
        if owner == nil {
            // The grace goes on from where it was (the restart's own time counted in).
            let gone = detachedFor ?? .zero
            detached.withLockedValue { $0 = now - gone }
            // Within the same bound as in the old process: a restart that left a peer's
            // connections behind must not leave it more sessions waiting (helper-24: 294
            // waiting for one user after a restart, and `status` counting 256 of them).
            closeOverDetachedLimit(services.directory.detached(self))
            scheduleGraceEnd(after: services.resumeGrace.map { max(.zero, $0 - gone) } ?? .zero)
        }
    }

    /// The hold of a connection holding this session (its opener's, made by `init`; a
    /// restored session's, one per connection it was held by).
    func hold(of output: ConnectionOutput) -> SessionHold? {
        eventLoop.preconditionInEventLoop()
        if owner?.output === output { return owner }
        return viewers.first { $0.output === output }
    }

    /// Stops the session for a handover and returns what the next process needs. Answers
    /// arriving later are ignored: the next process asks again (`resumeAfterHandover`).
    func freezeForHandover() -> (state: FormSession, seq: UInt64, age: TimeAmount, owner: ConnectionOutput?, views: [ConnectionOutput], detachedFor: TimeAmount?) {
        eventLoop.preconditionInEventLoop()
        closedFlag.set()
        deadlineTask?.cancel()
        cancelIdleCheck()
        graceTask?.cancel()
        checkInFlight?.cancellation.cancel()
        let now = services.clock.now()
        return (state, seq, now - openedAt, owner?.output, viewers.map(\.output), detached.withLockedValue { $0 }.map { now - $0 })
    }

    /// In the next process: runs again the checks that were in flight; a signup or login
    /// the old process could not finish within the drain is answered as not done.
    func resumeAfterHandover() {
        eventLoop.preconditionInEventLoop()
        for effect in state.resumeChecks(now: services.clock.moment) { perform(effect) }
        if state.busy { feed(.submitCompleted(.storeUnavailable)) }
    }

    /// Connections attached besides the opener.
    var views: Int { viewCount.withLockedValue { $0 } }

    /// How long ago its opener's connection dropped, while nobody has resumed it; any thread.
    func detachedFor(now: NIODeadline) -> TimeAmount? {
        detached.withLockedValue { $0 }.map { now - $0 }
    }

    /// Whether the session waits for a check or a submit (a half-closed client is kept
    /// until these are answered).
    var hasPendingWork: Bool {
        eventLoop.preconditionInEventLoop()
        return state.busy || state.hasPendingCheck
    }

    /// Runs `body` on the engine's state where it is stored. A call into FormEngine on
    /// `state`, a struct stored in this class, copied it whole first (every string and array
    /// of the session and its form retained, then released): four copies a keystroke, a tenth
    /// of the daemon's retains (issue 29's profile). An exclusive access needs no copy.
    private func inPlace<T>(_ body: (inout FormSession) -> T) -> T {
        body(&state)
    }

    /// Applies a client input; events go to every connection holding it, the requester's echo its id.
    func handle(_ input: FormInput, id requestID: RequestID?, from requester: ConnectionOutput?) throws(FormError) {
        eventLoop.preconditionInEventLoop()
        guard !isClosed else { return }
        // One reading of the clock for the request, the engine and the timer's start (a
        // `set` read it four times: 3 % of the daemon's CPU at 8 requests in flight).
        let now = services.clock.now()
        if requester != nil { lastRequest = now }
        // Only a `set` is timed (`signupd_validation_seconds`): no second reading for the rest.
        let timed = if case .set = input { true } else { false }
        let step = try state.handle(input, now: DaemonClock.moment(now))
        if case .submit = input, state.paused != nil {
            // Refused by the pause: counted as a signup that ended so.
            let paused = SubmitOutcome.signupsPaused(note: state.paused?.note)
            services.metrics.submitted(.signup, form: formName, outcome: paused)
            services.activity.submitted(.signup, outcome: paused, peer: principal.key)
        }
        publish(step.events, id: requestID, requester: requester)
        // One observation per accepted `set`: to its events queued for every connection.
        if timed { validationTimer.recordNanoseconds((services.clock.now() - now).nanoseconds) }
        for effect in step.effects { perform(effect) }
    }

    /// A client's `set`, within its owner's share of session memory (`SessionBytes`): values
    /// that grow past their reservation take the next step first; ones that shrink well below
    /// it give steps back. A `set` the engine refuses anyway (an unknown field, a value over
    /// its cap) is refused for that, before any memory is asked for.
    func set(field: String, value: String, id requestID: RequestID?, from requester: ConnectionOutput) throws(RequestFailure) {
        eventLoop.preconditionInEventLoop()
        // Read in place (`inPlace`): the values' total after this `set`, nil when the engine
        // refuses it anyway.
        let after: Int? = inPlace { state in
            guard let index = state.form.index(of: field), value.utf8.count <= state.form.inputByteCap(of: index) else { return nil }
            return state.valueBytes - state.values[index].utf8.count + value.utf8.count
        }
        guard let values = after else {
            do throws(FormError) { try handle(.set(field: field, value: value), id: requestID, from: requester) } catch {
                throw RequestFailure(error, form: formName, session: id)
            }
            return
        }
        let reserved = heldBytes - SessionBytesState.perSession
        let reservation = SessionBytesState.reservation(for: values, reserved: reserved)
        let growth = reservation - reserved
        if growth > 0, let refusal = services.sessionBytes.take(growth, peer: principal.key) {
            throw .sessionMemory(refusal, limit: services.sessionBytes.limit, session: id)
        }
        do throws(FormError) {
            try handle(.set(field: field, value: value), id: requestID, from: requester)
        } catch {
            services.sessionBytes.give(growth, peer: principal.key)
            throw RequestFailure(error, form: formName, session: id)
        }
        if isClosed {
            // `close` gave back what it held before this `set`.
            services.sessionBytes.give(growth, peer: principal.key)
        } else {
            services.sessionBytes.give(-growth, peer: principal.key)
            heldBytes += growth
        }
    }

    /// The operator paused sign-up, or opened it again (nil): a signup form tells every
    /// connection holding it.
    func signupsPaused(_ pause: SignupPause?) {
        eventLoop.preconditionInEventLoop()
        guard !isClosed else { return }
        feed(.signupsPaused(pause))
    }

    /// The locale messages are rendered in (resolved).
    var locale: String {
        eventLoop.preconditionInEventLoop()
        return state.locale
    }

    /// Switches the locale: every connection holding it is told, then gets the snapshot re-rendered.
    func switchLocale(to tag: String, id requestID: RequestID?, from requester: ConnectionOutput) {
        eventLoop.preconditionInEventLoop()
        guard !isClosed else { return }
        lastRequest = services.clock.now()
        guard let step = try? state.handle(.setLocale(tag), now: services.clock.moment) else { return }
        forEachHold { hold in
            hold.output.deliver(.localeChanged(session: id, locale: state.locale, id: hold.output === requester ? requestID : nil))
        }
        publish(step.events, id: requestID, requester: requester)
    }

    /// Sends the full state to one connection.
    func sendSnapshot(to output: ConnectionOutput, id requestID: RequestID?) {
        eventLoop.preconditionInEventLoop()
        lastRequest = services.clock.now()
        for event in state.snapshot() {
            seq += 1
            output.deliver(.session(session: id, seq: seq, event, id: requestID))
        }
    }

    /// An attached connection joins (`attach`, on a live session).
    func subscribe(_ hold: SessionHold) {
        eventLoop.preconditionInEventLoop()
        viewers.append(hold)
        viewCount.withLockedValue { $0 = viewers.count }
    }

    /// A connection leaves; the session closes when its owner does (`close`). When the
    /// owner's connection dropped (`dropped`), the session waits `--resume-grace` for a
    /// `resume` instead.
    func unsubscribe(_ hold: SessionHold, dropped: Bool = false) {
        eventLoop.preconditionInEventLoop()
        // Ended already (its `closed` may still be on its way to the leaving connection).
        guard !isClosed else { return hold.end() }
        if owner === hold {
            guard dropped, let grace = services.resumeGrace, grace > .zero else { return close() }
            hold.end()
            owner = nil
            detached.withLockedValue { $0 = services.clock.now() }
            scheduleGraceEnd(after: grace)
            // A peer dropping connection after connection keeps a bounded number waiting.
            closeOverDetachedLimit(services.directory.detached(self))
        } else {
            hold.end()
            viewers.removeAll { $0 === hold }
            viewCount.withLockedValue { $0 = viewers.count }
        }
    }

    /// Ends the oldest waiting sessions a peer had over `maxDetachedPerPeer`, on their loops.
    private func closeOverDetachedLimit(_ evicted: [Session]) {
        let limit = services.directory.maxDetachedPerPeer
        for oldest in evicted {
            ConnectionHandler.onLoop(of: oldest) { $0.close(reason: "abandoned: more than \(limit) sessions of this user were waiting to be resumed") }
        }
    }

    /// Closes the session `grace` from now unless it is resumed meanwhile.
    private func scheduleGraceEnd(after grace: TimeAmount) {
        graceTask?.cancel()
        let seconds = (services.resumeGrace ?? .zero).nanoseconds / 1_000_000_000
        graceTask = eventLoop.scheduleTask(in: grace) { [self] in
            guard !isClosed, owner == nil else { return }
            // A signup or login being worked on is owed its result: the grace waits for it.
            if state.busy { return scheduleGraceEnd(after: .seconds(1)) }
            close(reason: "abandoned: its connection dropped and nobody resumed it within \(seconds) seconds")
        }
    }

    /// `resume`: the opener's connection (or a new one of the same owner) takes the session
    /// back with its secret. A live opener elsewhere is told `closed` (resumed by another
    /// connection). The resumer gets `resumed`, the whole snapshot, and a result that
    /// arrived while nobody held it.
    func resume(by output: ConnectionOutput, secret: String, id requestID: RequestID?) throws(RequestFailure) -> SessionHold {
        eventLoop.preconditionInEventLoop()
        guard !isClosed else { throw .sessionEnded(id) }
        guard output.principal.owner == principal.owner else { throw .otherUsersSession(id) }
        guard ResumeSecret.matches(secret, resumeSecret) else { throw .wrongResumeSecret(id) }
        if let previous = owner {
            guard previous.output !== output else { throw .alreadyHeld(session: id) }
            previous.output.deliver(.closed(session: id, reason: "resumed by another connection", id: nil)) { previous.end() }
        }
        if let view = viewers.first(where: { $0.output === output }) {
            view.end()
            viewers.removeAll { $0 === view }
            viewCount.withLockedValue { $0 = viewers.count }
        }
        graceTask?.cancel()
        graceTask = nil
        if detached.withLockedValue({ $0 }) != nil { services.directory.reattached(self) }
        detached.withLockedValue { $0 = nil }
        lastRequest = services.clock.now()
        let hold = SessionHold(self, output, isOwner: true)
        owner = hold
        output.deliver(.resumed(session: id, form: formName, locale: state.locale, id: requestID))
        sendSnapshot(to: output, id: requestID)
        if let result = undeliveredResult {
            undeliveredResult = nil
            seq += 1
            output.deliver(.session(session: id, seq: seq, result, id: requestID))
        }
        return hold
    }

    /// Ends the session: attached peers are told, pending timers stop. Work already
    /// started (a signup) still completes in the store. With a `reason` (the session
    /// itself decided to end, e.g. idle), the opener hears `closed` with it too.
    func close(reason: String? = nil) {
        eventLoop.preconditionInEventLoop()
        guard !isClosed else { return }
        closedFlag.set()
        deadlineTask?.cancel()
        cancelIdleCheck()
        graceTask?.cancel()
        checkInFlight?.cancellation.cancel()
        budgetWait?.cancel()
        budgetWait = nil
        if checkWaitingForBudget {
            checkWaitingForBudget = false
            services.checkBudget.refund(peer: principal.key)
        }
        nextCheck = nil
        passwordChecks.removeAll()
        if let owner {
            if reason == nil { owner.end() } else { owner.output.deliver(.closed(session: id, reason: reason, id: nil)) { owner.end() } }
        }
        for hold in viewers {
            // An attached connection hears `closed` first; its requests naming the session
            // are answered "has ended" only after that, in order.
            hold.output.deliver(.closed(session: id, reason: reason, id: nil)) { hold.end() }
        }
        owner = nil
        viewers.removeAll()
        services.sessionBytes.give(heldBytes, peer: principal.key)
        heldBytes = 0
        if detached.withLockedValue({ $0 }) != nil { services.directory.reattached(self) }
        services.directory.remove(id, owner: principal.owner, reason: reason)
    }

    /// Looks, once `delay` has passed, whether the session went `--session-idle-timeout`
    /// without a request: then it ends, saying why; else it looks again when it could.
    private func scheduleIdleCheck(after delay: TimeAmount?) {
        guard let delay, let timeout = services.sessionIdleTimeout else { return }
        idleCheck = services.loopTimers.timers(on: eventLoop).schedule(in: delay) { [self] in
            idleCheck = nil
            guard !isClosed else { return }
            // A signup or login being worked on is no abandoned form: its result is owed.
            if state.busy { lastRequest = services.clock.now() }
            let quiet = services.clock.now() - lastRequest
            if quiet >= timeout {
                let seconds = timeout.nanoseconds / 1_000_000_000
                close(reason: "idle: no request for \(seconds) \(seconds == 1 ? "second" : "seconds")")
            } else {
                scheduleIdleCheck(after: timeout - quiet)
            }
        }
    }

    private func cancelIdleCheck() {
        guard let idleCheck else { return }
        services.loopTimers.timers(on: eventLoop).cancel(idleCheck)
        self.idleCheck = nil
    }

    private func publish(_ events: [SessionEvent], id requestID: RequestID?, requester: ConnectionOutput?) {
        for event in events {
            seq += 1
            if owner == nil, case .result = event { undeliveredResult = event }
            forEachHold { hold in
                hold.output.deliver(.session(session: id, seq: seq, event, id: hold.output === requester ? requestID : nil))
            }
        }
    }

    /// The opener's hold, then the attached ones.
    private func forEachHold(_ body: (SessionHold) -> Void) {
        if let owner { body(owner) }
        for hold in viewers { body(hold) }
    }

    /// Feeds an answer from the outside world back into the engine.
    private func feed(_ input: FormInput) {
        eventLoop.preconditionInEventLoop()
        do {
            try handle(input, id: nil, from: nil)
        } catch {
            // Answers and ticks never throw; a refusal here changes nothing.
        }
    }

    /// The check's deadline came: the engine answers "Error contacting server" and cancels
    /// it as timed out, which the availability client logs as the service not answering.
    private func timeUp() {
        timingOut = true
        defer { timingOut = false }
        feed(.tick)
    }

    private func startPasswordCheck() {
        eventLoop.preconditionInEventLoop()
        passwordChecks.removeAll { !state.awaitsPasswordCheck($0.id) }
        guard !isClosed, !passwordChecks.isEmpty else { return }
        let (checkID, password, user) = passwordChecks.removeFirst()
        passwordCheckInFlight = true
        let quality = configuration.passwordQuality
        NIOThreadPool.singleton.runIfActive(eventLoop: eventLoop) {
            quality.check(password, user)
        }.whenComplete { [self] result in
            if case .success(let failure) = result { feed(.passwordChecked(check: checkID, failure)) }
            passwordCheckInFlight = false
            startPasswordCheck()
        }
    }

    /// Starts a check, or — past the budget — reserves its turn and starts it then
    /// (`paid`: the turn has come; the newest value takes it if a newer one superseded it).
    private func startCheck(_ checkID: UInt64, _ identity: IdentityValue, paid: Bool = false) {
        eventLoop.preconditionInEventLoop()
        let cancellation = CheckCancellation()
        checkInFlight = (checkID, cancellation)
        // Past the budget the check starts later; a newer value supersedes it meanwhile.
        let wait = paid ? .zero : services.checkBudget.take(peer: principal.key, session: &checkBucket, now: services.clock.now())
        guard wait == .zero else {
            checkWaitingForBudget = true
            budgetWait = eventLoop.scheduleTask(in: wait) { [self] in
                budgetWait = nil
                checkInFlight = nil
                guard !isClosed else { return }
                if !cancellation.isCancelled {
                    startCheck(checkID, identity, paid: true)
                } else {
                    startQueuedCheck(paid: true)
                }
            }
            return
        }
        if checkWaitingForBudget {
            // It waited for the budget: the timeout runs from now (the engine's deadline
            // has passed or will have by the time this tick comes: it then times out).
            checkWaitingForBudget = false
            deadlineTask?.cancel()
            deadlineTask = eventLoop.scheduleTask(in: .nanoseconds(configuration.checkTimeout.nanoseconds)) { [self] in
                timeUp()
            }
        }
        services.availability(of: identity, peer: principal.key, cancellation: cancellation, on: eventLoop).whenComplete { [self] result in
            checkInFlight = nil
            if !cancellation.isCancelled { feed(.availability(check: checkID, (try? result.get()) ?? .unreachable)) }
            if !isClosed { startQueuedCheck(paid: false) }
        }
    }

    /// Starts the check a newer value queued behind the one that just ended, if any
    /// (`paid`: it takes the turn the ended one had reserved).
    private func startQueuedCheck(paid: Bool) {
        guard let next = nextCheck else { return }
        nextCheck = nil
        startCheck(next.id, next.identity, paid: paid)
    }

    private func perform(_ effect: FormEffect) {
        eventLoop.preconditionInEventLoop()
        switch effect {
        case .startCheck(let checkID, let identity, let deadline):
            deadlineTask?.cancel()
            deadlineTask = eventLoop.scheduleTask(deadline: .uptimeNanoseconds(UInt64(deadline.nanoseconds))) { [self] in
                // A check still waiting for the budget gets its timeout when it starts.
                guard !checkWaitingForBudget else { return }
                timeUp()
            }
            if let inFlight = checkInFlight {
                inFlight.cancellation.cancel()
                nextCheck = (checkID, identity)
            } else {
                startCheck(checkID, identity)
            }
        case .checkPassword(let checkID, let password, let user):
            // libpwquality reads cracklib's dictionary (milliseconds): never on the event loop.
            // One check at a time per session; queued ones a newer value made stale are dropped.
            passwordChecks.removeAll { !state.awaitsPasswordCheck($0.id) }
            passwordChecks.append((checkID, password, user))
            if !passwordCheckInFlight { startPasswordCheck() }
        case .cancelCheck(let checkID):
            // The engine ignores a late answer by its id; the timer stops, the work is aborted.
            deadlineTask?.cancel()
            deadlineTask = nil
            if checkInFlight?.id == checkID { checkInFlight?.cancellation.cancel(timedOut: timingOut) }
            if nextCheck?.id == checkID { nextCheck = nil }
        case .submit(let action, let identity, let password):
            services.registry.submitStarted()
            // Nobody waits for a hash whose session has ended: the queue skips it. Nor, once
            // the daemon stops or restarts, for one whose connection is gone (detached): the
            // drain would wait for it, and one who queued hashes and hung up would hold the
            // stop up for everyone. `resume` then finds the submit answered `unavailable`.
            let isWanted: @Sendable () -> Bool = { [closedFlag, detached, registry = services.registry] in
                !closedFlag.isSet && !(registry.isDraining && detached.withLockedValue { $0 != nil })
            }
            let outcome = switch action {
            case .signup: services.accounts.signup(identity, password: password, principal: principal, isWanted: isWanted, on: eventLoop)
            case .login: services.accounts.login(identity, password: password, principal: principal, pid: owner?.output.peer.pid, isWanted: isWanted, on: eventLoop)
            }
            outcome.whenComplete { [self] result in
                let answer = (try? result.get()) ?? .storeUnavailable
                services.metrics.submitted(action, form: formName, outcome: answer)
                services.activity.submitted(action, outcome: answer, peer: principal.key)
                feed(.submitCompleted(answer))
                services.registry.submitFinished()
            }
        }
    }
}

/// A session's closed state, shared with work queued for it on other threads.
final class ClosedFlag: Sendable {
    private let value = Atomic<Bool>(false)
    var isSet: Bool { value.load(ordering: .relaxed) }
    func set() { value.store(true, ordering: .relaxed) }
}
