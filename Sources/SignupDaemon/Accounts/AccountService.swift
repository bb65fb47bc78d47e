import FormEngine
import Logging
import NIOConcurrencyHelpers
import NIOCore
import Synchronization
import UsernameIdentity

#if canImport(Glibc)
import Glibc
#endif

/// Signups, logins, token checks and the store half of availability checks. Password
/// hashing runs on the fair, bounded `HashQueue` (its threads bound concurrent Argon2id,
/// each using `hashCost.memoryBytes`); store calls are awaited in tasks that hold no thread
/// while the database works, so that keystroke checks never queue behind password hashing.
/// Callers on an event loop get futures, as before the store became async.
final class AccountService: Sendable {
    let store: any AccountStore
    private let hasher: PasswordHasher
    let hashQueue: HashQueue
    private let limiter: LoginRateLimiter
    /// Failures every host sees (PostgreSQL store); nil: this host's limiter alone.
    private let sharedLoginFailures: (any SharedLoginFailures)?
    private let tokenLifetimeSeconds: Int64
    private let logger: Logger
    /// A hash to verify against when the account does not exist, so that a missing
    /// account costs the same time as a wrong password. Made on first use, on the hash
    /// pool: computing it at start-up would delay the first `hello` by a whole hash.
    private let decoyHash = NIOLockedValueBox<String?>(nil)
    private let signupCount = Atomic<Int>(0)
    private let loginCount = Atomic<Int>(0)
    /// What operators see: metrics and summarised log lines (the store's and the hash
    /// pool's timings are taken here).
    let reporting: Reporting
    var metrics: DaemonMetrics { reporting.metrics }
    /// Sign-up paused by an operator (issue 26), shared through the store.
    let pause: SignupPauseState

    /// The time for the login limiter's windows and back-off.
    private let clock: DaemonClock
    /// Store calls, taken in turns per peer.
    let storeTurns: StoreTurns
    /// The peer the daemon's own store calls (expired-token pruning) are queued as.
    private static let daemonItself = PeerKey(uid: getuid())

    init(
        store: any AccountStore, configuration: DaemonConfiguration, logger: Logger, sharedLoginFailures: (any SharedLoginFailures)? = nil,
        clock: DaemonClock = .system, metrics: DaemonMetrics = DaemonMetrics(version: signupdVersion)
    ) {
        self.store = store
        reporting = Reporting(metrics: metrics, log: LogSummary(logger: logger, metrics: metrics, window: .seconds(Int64(configuration.logSummarySeconds))))
        pause = SignupPauseState(store: store, logger: logger, metrics: metrics)
        self.clock = clock
        storeTurns = StoreTurns(width: configuration.storeWidth)
        self.sharedLoginFailures = sharedLoginFailures
        hasher = PasswordHasher(cost: configuration.hashCost)
        hashQueue = HashQueue(
            threads: configuration.hashConcurrency, maxPerUID: configuration.maxQueuedHashesPerUID, maxTotal: configuration.maxQueuedHashes
        )
        limiter = LoginRateLimiter(limit: configuration.loginAttemptsPerMinute, backstop: configuration.loginBackstopPerHour)
        tokenLifetimeSeconds = configuration.tokenLifetimeSeconds
        self.logger = logger
    }

    /// Signups and logins completed since start.
    var counts: (signups: Int, logins: Int) {
        (signupCount.load(ordering: .relaxed), loginCount.load(ordering: .relaxed))
    }

    func shutdown() async throws {
        try await hashQueue.shutdown()
    }

    /// Whether the store has no account with this identity, nor one it could be confused with.
    func storeAvailability(of value: IdentityValue, peer: PeerKey, on eventLoop: EventLoop) -> EventLoopFuture<Availability> {
        // The form applied the same rule already; a name failing it here is never free.
        guard let identity = AccountIdentity.of(value) else {
            return eventLoop.makeSucceededFuture(.unreachable)
        }
        return eventLoop.makeFutureWithLoopTask { [self] in
            switch try await timed(.availability, peer: peer, { () async throws(AccountStoreError) in try await store.availability(of: identity) }) {
            case .available: .available
            case .taken: .taken
            case .tooSimilar: .tooSimilar
            }
        }.recover { _ in .unreachable }
    }

    /// Hashes and stores a new account. The result is durable before the future completes.
    /// `uid` is the requesting peer's (the queue is fair across uids); the job is skipped
    /// when `isWanted` says nobody waits for it any more.
    func signup(_ value: IdentityValue, password: String, principal: Principal, isWanted: @escaping @Sendable () -> Bool, on eventLoop: EventLoop) -> EventLoopFuture<SubmitOutcome> {
        hashed(peer: principal.key, isWanted: isWanted, on: eventLoop) { [self] () -> String? in
            do {
                return try hasher.hash(password)
            } catch {
                logger.error("password hashing failed", metadata: ["error": "\(error)"])
                return nil
            }
        }.flatMap { [self] job in
            switch job {
            case .notRun(let answer): eventLoop.makeSucceededFuture(answer)
            case .ran(nil): eventLoop.makeSucceededFuture(.storeUnavailable)
            case .ran(let hash?): eventLoop.makeFutureWithLoopTask { await self.createAccount(value, passwordHash: hash, peer: principal.key) }
            }
        }
    }

    /// The store half of a signup, once the password is hashed.
    private func createAccount(_ value: IdentityValue, passwordHash hash: String, peer: PeerKey) async -> SubmitOutcome {
        guard let identity = AccountIdentity.of(value) else { return .usernameTaken }
        do {
            // Paused since the submit (on another host, or while the password was hashed).
            if let pause = pause.current { return .signupsPaused(note: pause.note) }
            let now = Int64(wallClockSeconds())
            switch try await timed(.createAccount, peer: peer, { () async throws(AccountStoreError) in try await store.createAccount(identity, passwordHash: hash, createdAt: now) }) {
            case .available: break
            case .taken: return .usernameTaken
            case .tooSimilar: return .usernameTooSimilar
            }
            signupCount.add(1, ordering: .relaxed)
            logger.info("account created", metadata: ["user": "\(identity.display)"])
            return .signedUp(user: identity.display)
        } catch .fileReplaced(let why) {
            logger.critical("signup refused: the account store is unavailable", metadata: ["user": "\(identity.display)", "error": "\(why)"])
            return .storeUnavailable
        } catch {
            logger.error("signup not stored", metadata: ["user": "\(identity.display)", "error": "\(error)"])
            return .storeUnavailable
        }
    }

    /// What became of a job given to the hash queue.
    private enum HashJob<Value: Sendable>: Sendable {
        case ran(Value)
        /// Refused, displaced or abandoned: never ran. The answer the client gets.
        case notRun(SubmitOutcome)
    }

    /// Runs `work` on the hash queue; a full queue answers `.rateLimited` at once, a job
    /// that never starts `.storeUnavailable` (nothing was written).
    private func hashed<Value: Sendable>(
        peer: PeerKey, isWanted: @escaping @Sendable () -> Bool, on eventLoop: EventLoop, in place: HashQueue.Reservation? = nil,
        onAbandon: @escaping @Sendable () -> Void = {}, _ work: @escaping @Sendable () -> Value
    ) -> EventLoopFuture<HashJob<Value>> {
        let promise = eventLoop.makePromise(of: HashJob<Value>.self)
        let job = HashQueue.Job(
            peer: peer, isWanted: isWanted,
            run: { [metrics] in
                let start = NIODeadline.now()
                let value = work()
                metrics.hashed(nanoseconds: (NIODeadline.now() - start).nanoseconds)
                promise.succeed(.ran(value))
            },
            abandon: { onAbandon(); promise.succeed(.notRun(.storeUnavailable)) },
            displace: { onAbandon(); promise.succeed(.notRun(.rateLimited)) }
        )
        if let place {
            hashQueue.enqueue(job, in: place)
            return promise.futureResult
        }
        do {
            try hashQueue.enqueue(job)
        } catch {
            promise.succeed(.notRun(refused(error, peer: peer, onAbandon: onAbandon)))
        }
        return promise.futureResult
    }

    /// A signup or login the hash queue has no room for: "too many attempts" (or the
    /// store's unavailability, when stopping).
    private func refused(_ error: HashQueue.Refusal, peer: PeerKey, onAbandon: () -> Void = {}) -> SubmitOutcome {
        reporting.log.log(.notice, "password hashing refused", peer: peer, metadata: ["peer": "\(peer)", "reason": "\(error)"])
        onAbandon()
        return error == .stopped ? .storeUnavailable : .rateLimited
    }

    /// Checks a password; on success issues a token and upgrades an outdated hash.
    /// The attempt is counted against (`uid`, the identity's skeleton) before anything else,
    /// so parallel attempts cannot overshoot the limit. Usernames, phone numbers and e-mail
    /// addresses alike: the key is the store identity's skeleton.
    func login(_ value: IdentityValue, password: String, principal: Principal, pid: Int32? = nil, isWanted: @escaping @Sendable () -> Bool, on eventLoop: EventLoop) -> EventLoopFuture<SubmitOutcome> {
        let peer = principal.key
        guard let identity = AccountIdentity.of(value) else {
            // The form applied the same rule already; no account can have this name.
            return hashed(peer: peer, isWanted: isWanted, on: eventLoop) { [self] () -> SubmitOutcome in
                _ = hasher.verify(password, against: decoy())
                return .invalidCredentials
            }.map { job in
                switch job {
                case .ran(let answer), .notRun(let answer): answer
                }
            }
        }
        // Every spelling that looks like this name shares one counter.
        let device = principal.client == nil ? nil : principal.owner
        let reservation: LoginRateLimiter.Reservation
        switch limiter.reserve(peer: peer, device: device, key: identity.skeleton, now: clock.now().uptimeNanoseconds) {
        case .success(let reserved): reservation = reserved
        case .failure(let refusal):
            let why = refusal == .backstop ? "login refused by the backstop (front-end clients together failed too often on this name)" : "login throttled"
            reporting.log.log(.notice, why, peer: peer, metadata: principal.logMetadata(pid: pid, ["name": "\(identity.display)"]))
            return eventLoop.makeSucceededFuture(.rateLimited)
        }
        // Its place in the hash queue is taken now, before the store is asked: the queue's
        // bounds count the login from its submit (pipelined submits past them are refused at once).
        let place: HashQueue.Reservation
        do {
            place = try hashQueue.reserve(peer: peer)
        } catch {
            return eventLoop.makeSucceededFuture(refused(error, peer: peer, onAbandon: { limiter.release(reservation) }))
        }
        return eventLoop.makeFutureWithLoopTask { [self] in
            await login(identity, password: password, reservation: reservation, place: place, principal: principal, pid: pid, isWanted: isWanted, on: eventLoop)
        }
    }

    /// What the hash job found of a login's password.
    private enum PasswordVerdict: Sendable {
        /// No such account: the decoy hash was verified instead.
        case noAccount
        case wrong(StoredAccount)
        /// `upgraded`: the password hashed anew, when the stored hash's parameters are outdated.
        case right(StoredAccount, upgraded: String?)
    }

    /// A login of an identity the rule accepts: the store is asked for the account, the hash
    /// queue checks the password, the store keeps the token. `reservation` is settled or
    /// released on every path.
    private func login(
        _ identity: UsernameIdentity, password: String, reservation: LoginRateLimiter.Reservation, place: HashQueue.Reservation, principal: Principal,
        pid: Int32?, isWanted: @escaping @Sendable () -> Bool, on eventLoop: EventLoop
    ) async -> SubmitOutcome {
        let peer = principal.key
        // Nobody waits any more: as for a job the queue skips.
        guard isWanted() else {
            limiter.release(reservation)
            hashQueue.release(place)
            return .storeUnavailable
        }
        let account: StoredAccount?
        do {
            if let shared = sharedLoginFailures,
                try await shared.refuses(peer: peer, device: principal.client == nil ? nil : principal.owner, skeleton: identity.skeleton, limit: limiter.limit, globalLimit: limiter.globalLimit, backstop: limiter.backstop) {
                limiter.release(reservation)
                hashQueue.release(place)
                reporting.log.log(.notice, "login throttled (failures on every host)", peer: peer, metadata: principal.logMetadata(pid: pid, ["name": "\(identity.display)"]))
                return .rateLimited
            }
            account = try await timed(.account, peer: peer) { () async throws(AccountStoreError) in try await store.account(for: identity) }
        } catch {
            limiter.release(reservation)
            hashQueue.release(place)
            logger.error("login failed on the store", metadata: ["error": "\(error)"])
            return .storeUnavailable
        }
        let job = hashed(peer: peer, isWanted: isWanted, on: eventLoop, in: place, onAbandon: { [limiter] in limiter.release(reservation) }) { [self] in
            check(password, of: account)
        }
        let verdict: PasswordVerdict
        switch try? await job.get() {
        case .ran(let checked): verdict = checked
        case .notRun(let answer): return answer
        case nil: return .storeUnavailable  // the promise is never failed
        }
        switch verdict {
        case .noAccount:
            limiter.failed(reservation, accountID: nil, now: clock.now().uptimeNanoseconds)
            await recordSharedFailure(peer: peer, skeleton: identity.skeleton, accountID: nil)
            // Guessing names leaves a trace too (summarised per peer).
            reporting.log.log(.notice, "login failed (no such account)", peer: peer, metadata: principal.logMetadata(pid: pid, ["name": "\(identity.display.loggable)"]))
            return .invalidCredentials
        case .wrong(let account):
            limiter.failed(reservation, accountID: account.id, now: clock.now().uptimeNanoseconds)
            await recordSharedFailure(peer: peer, skeleton: identity.skeleton, accountID: account.id)
            reporting.log.log(.notice, "login failed", peer: peer, metadata: principal.logMetadata(pid: pid, ["user": "\(account.username)"]))
            return .invalidCredentials
        case .right(let account, let upgraded):
            limiter.succeeded(reservation, accountID: account.id, now: clock.now().uptimeNanoseconds)
            return await loggedIn(account, upgraded: upgraded, principal: principal, pid: pid, skeleton: identity.skeleton)
        }
    }

    /// Verifies `password`, on a hash thread. A missing account and a hash made with cheaper
    /// parameters cost the current parameters' time too, so that neither answers faster.
    private func check(_ password: String, of account: StoredAccount?) -> PasswordVerdict {
        guard let account else {
            _ = hasher.verify(password, against: decoy())
            return .noAccount
        }
        let outdated = hasher.needsRehash(account.passwordHash)
        guard hasher.verify(password, against: account.passwordHash) else {
            if outdated { _ = hasher.verify(password, against: decoy()) }
            return .wrong(account)
        }
        return .right(account, upgraded: outdated ? try? hasher.hash(password) : nil)
    }

    /// The store half of a successful login: failures forgotten, the hash upgraded, a token kept.
    private func loggedIn(_ account: StoredAccount, upgraded: String?, principal: Principal, pid: Int32?, skeleton: String) async -> SubmitOutcome {
        let peer = principal.key
        if let shared = sharedLoginFailures {
            do {
                try await shared.forgetFailures(peer: peer, device: principal.client == nil ? nil : principal.owner, skeleton: skeleton, accountID: account.id)
            } catch {
                logger.warning("cannot forget shared login failures", metadata: ["error": "\(error)"])
            }
        }
        do {
            if let upgraded {
                try await timed(.updatePasswordHash, peer: peer) { () async throws(AccountStoreError) in try await store.updatePasswordHash(accountID: account.id, passwordHash: upgraded) }
            }
            let token = LoginTokens.generate()
            let expiresAt = Int64(wallClockSeconds()) + tokenLifetimeSeconds
            try await timed(.storeToken, peer: peer) { () async throws(AccountStoreError) in try await store.storeToken(hash: LoginTokens.hash(token), accountID: account.id, expiresAt: expiresAt) }
            loginCount.add(1, ordering: .relaxed)
            logger.info("login", metadata: principal.logMetadata(pid: pid, ["user": "\(account.username)"]))
            return .loggedIn(user: account.username, token: token)
        } catch {
            logger.error("login failed on the store", metadata: ["error": "\(error)"])
            return .storeUnavailable
        }
    }

    /// Records a failed login where every host sees it; this host's limiter has it already.
    private func recordSharedFailure(peer: PeerKey, skeleton: String, accountID: Int64?) async {
        guard let shared = sharedLoginFailures else { return }
        do {
            try await shared.recordFailure(peer: peer, skeleton: skeleton, accountID: accountID)
        } catch {
            logger.warning("cannot record the login failure for other hosts", metadata: ["error": "\(error)"])
        }
    }

    /// Deletes expired login tokens.
    func pruneExpiredTokens(on eventLoop: EventLoop) {
        eventLoop.makeFutureWithLoopTask { [self] in
            try await timed(.deleteExpiredTokens, peer: Self.daemonItself) { () async throws(AccountStoreError) in try await store.deleteExpiredTokens(now: Int64(wallClockSeconds())) }
        }.whenComplete { [logger] result in
            switch result {
            case .success(let removed) where removed > 0: logger.info("expired tokens deleted", metadata: ["count": "\(removed)"])
            case .success: break
            case .failure(let error): logger.warning("cannot delete expired tokens", metadata: ["error": "\(error)"])
            }
        }
    }

    /// The decoy hash, made once. Hash pool only.
    private func decoy() -> String {
        decoyHash.withLockedValue { decoy in
            if let decoy { return decoy }
            let made = (try? hasher.hash("decoy password, never a real one")) ?? ""
            decoy = made
            return made
        }
    }

    /// Revokes a token (logout) in the store, so every host sharing it refuses the token
    /// from then on; false when it was unknown, malformed or expired already.
    func logout(token: String, peer: PeerKey, on eventLoop: EventLoop) -> EventLoopFuture<Bool> {
        guard LoginTokens.isWellFormed(token) else {
            metrics.loggedOut(.unknown)
            return eventLoop.makeSucceededFuture(false)
        }
        return eventLoop.makeFutureWithLoopTask { [self] in
            try await timed(.revokeToken, peer: peer) { () async throws(AccountStoreError) in try await store.revokeToken(hash: LoginTokens.hash(token), now: Int64(wallClockSeconds())) }
        }.always { [metrics] result in
            switch result {
            case .success(true): metrics.loggedOut(.revoked)
            case .success(false): metrics.loggedOut(.unknown)
            case .failure: metrics.loggedOut(.unavailable)
            }
        }
    }

    /// The user a token belongs to, nil when it is unknown, malformed or expired.
    func verify(token: String, peer: PeerKey, on eventLoop: EventLoop) -> EventLoopFuture<String?> {
        guard LoginTokens.isWellFormed(token) else { return eventLoop.makeSucceededFuture(nil) }
        return eventLoop.makeFutureWithLoopTask { [self] in
            try await timed(.tokenOwner, peer: peer) { () async throws(AccountStoreError) in try await store.tokenOwner(hash: LoginTokens.hash(token), now: Int64(wallClockSeconds())) }
        }
    }

    /// A store call in `peer`'s turn, timed for `signupd_store_seconds{operation}` (failures
    /// included; the wait for the turn is not the store's time).
    private func timed<T>(_ operation: StoreOperation, peer: PeerKey, _ call: () async throws(AccountStoreError) -> T) async throws(AccountStoreError) -> T {
        try await storeTurns.run(peer) { () async throws(AccountStoreError) -> T in
            let start = NIODeadline.now()
            defer { metrics.store(operation, nanoseconds: (NIODeadline.now() - start).nanoseconds) }
            return try await call()
        }
    }
}

/// Seconds since the Unix epoch, for stored timestamps and token expiry.
func wallClockSeconds() -> Int {
    var spec = timespec()
    clock_gettime(CLOCK_REALTIME, &spec)
    return spec.tv_sec
}

