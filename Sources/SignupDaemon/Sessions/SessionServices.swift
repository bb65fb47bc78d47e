import FormEngine
import NIOCore
import UsernameIdentity

/// What a session's effects are performed with.
struct SessionServices: Sendable {
    let accounts: AccountService
    let http: HTTPAvailabilityClient?
    let formConfiguration: FormConfiguration
    /// The forms new sessions are opened with (replaced by a reload).
    let forms: FormLibraryHolder
    let registry: ConnectionRegistry
    let directory: SessionDirectory
    /// Availability answers per uid and per session.
    let checkBudget: CheckBudget
    /// A session without a request this long is closed (`--session-idle-timeout`); nil: never.
    let sessionIdleTimeout: TimeAmount?
    /// How long a session whose opener's connection dropped waits for `resume`
    /// (`--resume-grace`); nil or zero: it ends with its connection.
    var resumeGrace: TimeAmount? = nil
    /// The time for sessions, budgets and idle timeouts.
    var clock = DaemonClock.system
    /// Connections that may attach to one session besides its opener
    /// (`--max-views-per-session`): every event of a session is written to each of them.
    var maxViewsPerSession = DaemonTuning.standard.maxViewsPerSession
    /// The memory sessions hold, per owner (`--max-session-bytes`).
    var sessionBytes = SessionBytes(limit: DaemonTuning.standard.maxSessionBytes)
    /// What all connections buffer together: unhandled input and unread output
    /// (`--max-buffered-bytes`).
    var bufferBudget = BufferBudget(limit: DaemonTuning.standard.maxBufferedBytes)
    /// Each loop's timers for its sessions' idle checks (one NIO task per loop, not per session).
    var loopTimers = LoopTimersByLoop()

    /// What operators scrape (issue 26).
    var metrics: DaemonMetrics { accounts.metrics }
    var reporting: Reporting { accounts.reporting }
    /// The last fifteen minutes' signups and logins, for `status`.
    var activity = RecentActivity()
    /// Sign-up paused by an operator (issue 26).
    var signupPause: SignupPauseState { accounts.pause }

    /// From now on, every live session hears when sign-up is paused or opened again.
    func tellSessionsOfPauses() {
        signupPause.onChange { [directory] pause in
            let forForms = pause.map { SignupPause(note: $0.note) }
            for session in directory.all {
                ConnectionHandler.onLoop(of: session) { $0.signupsPaused(forForms) }
            }
        }
    }

    /// The levels metrics and `status` report, read now.
    var levels: DaemonMetrics.Levels {
        DaemonMetrics.Levels(
            connections: registry.connectionCount, sessions: directory.count, detachedSessions: directory.detachedCount,
            hashQueueDepth: accounts.hashQueue.depth(peer: PeerKey(uid: .max)).total,
            bufferedBytes: max(0, bufferBudget.held), bufferBudget: bufferBudget.limit
        )
    }

    /// The engine configuration of a session opened now: the current catalogues.
    var currentFormConfiguration: FormConfiguration {
        var configuration = formConfiguration
        configuration.catalogues = forms.library.catalogues
        return configuration
    }

    /// The full availability check: the store first, then, for usernames, the HTTP service
    /// if configured. A cancelled check skips what has not started and aborts its HTTP request.
    func availability(of identity: IdentityValue, peer: PeerKey, cancellation: CheckCancellation, on eventLoop: EventLoop) -> EventLoopFuture<Availability> {
        let start = NIODeadline.now()
        return uncountedAvailability(of: identity, peer: peer, cancellation: cancellation, on: eventLoop).always { [metrics] result in
            // A check a newer value cancelled has no answer anyone waits for: not counted.
            guard !cancellation.isCancelled, case .success(let answer) = result else { return }
            metrics.availabilityChecked(answer, seconds: (NIODeadline.now() - start).nanoseconds)
        }
    }

    private func uncountedAvailability(of identity: IdentityValue, peer: PeerKey, cancellation: CheckCancellation, on eventLoop: EventLoop) -> EventLoopFuture<Availability> {
        let fromStore = accounts.storeAvailability(of: identity, peer: peer, on: eventLoop)
        guard let http, identity.kind == .username else { return fromStore }
        // The service is asked about the name as it would be stored and shown (NFC) and/or
        // its identity key, as the URL template says. The store only answers "available"
        // for a name the rule accepts, so the identity exists whenever the service is asked.
        guard let username = try? Usernames.identity(of: identity.value).get() else { return fromStore }
        return fromStore.flatMap { availability in
            guard availability == .available, !cancellation.isCancelled else { return eventLoop.makeSucceededFuture(availability) }
            return http.check(username: username.display, key: username.key, peer: peer, cancellation: cancellation, on: eventLoop)
        }
    }
}
