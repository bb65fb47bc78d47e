import FormEngine
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import Synchronization
import UsernameIdentity

#if canImport(Glibc)
import Glibc
#endif

/// Signups, logins, token checks and the store half of availability checks. Password
/// hashing runs on the fair, bounded `HashQueue` (its threads bound concurrent Argon2id,
/// each using `hashCost.memoryBytes`); short store reads on their own pool, so that
/// keystroke checks never queue behind password hashing.
final class AccountService: Sendable {
    let store: any AccountStore
    private let hasher: PasswordHasher
    let hashQueue: HashQueue
    private let storePool: NIOThreadPool
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

    /// The time for the login limiter's windows and back-off.
    private let clock: DaemonClock

    init(
        store: any AccountStore, configuration: DaemonConfiguration, logger: Logger, sharedLoginFailures: (any SharedLoginFailures)? = nil,
        clock: DaemonClock = .system
    ) {
        self.store = store
        self.clock = clock
        self.sharedLoginFailures = sharedLoginFailures
        hasher = PasswordHasher(cost: configuration.hashCost)
        hashQueue = HashQueue(
            threads: configuration.hashConcurrency, maxPerUID: configuration.maxQueuedHashesPerUID, maxTotal: configuration.maxQueuedHashes
        )
        storePool = NIOThreadPool(numberOfThreads: 2)
        limiter = LoginRateLimiter(limit: configuration.loginAttemptsPerMinute)
        tokenLifetimeSeconds = configuration.tokenLifetimeSeconds
        self.logger = logger
        storePool.start()
    }

    /// Signups and logins completed since start.
    var counts: (signups: Int, logins: Int) {
        (signupCount.load(ordering: .relaxed), loginCount.load(ordering: .relaxed))
    }

    func shutdown() async throws {
        try await hashQueue.shutdown()
        try await storePool.shutdownGracefully()
    }

    /// Whether the store has no account with this identity, nor one it could be confused with.
    func storeAvailability(of value: IdentityValue, on eventLoop: EventLoop) -> EventLoopFuture<Availability> {
        // The form applied the same rule already; a name failing it here is never free.
        guard let identity = AccountIdentity.of(value) else {
            return eventLoop.makeSucceededFuture(.unreachable)
        }
        return storePool.runIfActive(eventLoop: eventLoop) { [store] in
            switch try store.availability(of: identity) {
            case .available: .available
            case .taken: .taken
            case .tooSimilar: .tooSimilar
            }
        }.recover { _ in .unreachable }
    }

    /// Hashes and stores a new account. The result is durable before the future completes.
    /// `uid` is the requesting peer's (the queue is fair across uids); the job is skipped
    /// when `isWanted` says nobody waits for it any more.
    func signup(_ value: IdentityValue, password: String, uid: UInt32, isWanted: @escaping @Sendable () -> Bool, on eventLoop: EventLoop) -> EventLoopFuture<SubmitOutcome> {
        hashed(uid: uid, isWanted: isWanted, on: eventLoop) { [self] in
            let hash: String
            do {
                hash = try hasher.hash(password)
            } catch {
                logger.error("password hashing failed", metadata: ["error": "\(error)"])
                return .storeUnavailable
            }
            guard let identity = AccountIdentity.of(value) else { return .usernameTaken }
            do {
                let now = Int64(wallClockSeconds())
                switch try store.createAccount(identity, passwordHash: hash, createdAt: now) {
                case .available: break
                case .taken: return .usernameTaken
                case .tooSimilar: return .usernameTooSimilar
                }
                signupCount.add(1, ordering: .relaxed)
                logger.info("account created", metadata: ["user": "\(identity.display)"])
                return .signedUp(user: identity.display)
            } catch AccountStoreError.fileReplaced(let why) {
                logger.critical("signup refused: the account store is unavailable", metadata: ["user": "\(identity.display)", "error": "\(why)"])
                return .storeUnavailable
            } catch {
                logger.error("signup not stored", metadata: ["user": "\(identity.display)", "error": "\(error)"])
                return .storeUnavailable
            }
        }
    }

    /// Runs `work` on the hash queue; a full queue answers `.rateLimited` at once, a job
    /// that never starts `.storeUnavailable` (nothing was written).
    private func hashed(
        uid: UInt32, isWanted: @escaping @Sendable () -> Bool, on eventLoop: EventLoop,
        onAbandon: @escaping @Sendable () -> Void = {}, _ work: @escaping @Sendable () -> SubmitOutcome
    ) -> EventLoopFuture<SubmitOutcome> {
        let promise = eventLoop.makePromise(of: SubmitOutcome.self)
        do {
            try hashQueue.enqueue(HashQueue.Job(
                uid: uid, isWanted: isWanted,
                run: { promise.succeed(work()) },
                abandon: { onAbandon(); promise.succeed(.storeUnavailable) },
                displace: { onAbandon(); promise.succeed(.rateLimited) }
            ))
        } catch {
            logger.notice("password hashing refused", metadata: ["uid": "\(uid)", "reason": "\(error)"])
            onAbandon()
            promise.succeed(error == .stopped ? .storeUnavailable : .rateLimited)
        }
        return promise.futureResult
    }

    /// Checks a password; on success issues a token and upgrades an outdated hash.
    /// The attempt is counted against (`uid`, the identity's skeleton) before it is
    /// queued, so parallel attempts cannot overshoot the limit. Usernames, phone numbers
    /// and e-mail addresses alike: the key is the store identity's skeleton.
    func login(_ value: IdentityValue, password: String, uid: UInt32, isWanted: @escaping @Sendable () -> Bool, on eventLoop: EventLoop) -> EventLoopFuture<SubmitOutcome> {
        guard let identity = AccountIdentity.of(value) else {
            // The form applied the same rule already; no account can have this name.
            return hashed(uid: uid, isWanted: isWanted, on: eventLoop) { [self] in
                _ = hasher.verify(password, against: decoy())
                return .invalidCredentials
            }
        }
        // Every spelling that looks like this name shares one counter.
        guard let reservation = limiter.reserve(uid: uid, key: identity.skeleton, now: clock.now().uptimeNanoseconds) else {
            return eventLoop.makeSucceededFuture(.rateLimited)
        }
        return hashed(uid: uid, isWanted: isWanted, on: eventLoop, onAbandon: { [limiter] in limiter.release(reservation) }) { [self] in
            let now = { [clock] in clock.now().uptimeNanoseconds }
            var settled = false
            do {
                if let shared = sharedLoginFailures,
                    try shared.refuses(uid: uid, skeleton: identity.skeleton, limit: limiter.limit, globalLimit: limiter.globalLimit) {
                    limiter.release(reservation)
                    settled = true
                    return .rateLimited
                }
                guard let account = try store.account(for: identity) else {
                    _ = hasher.verify(password, against: decoy())
                    limiter.failed(reservation, accountID: nil, now: now())
                    settled = true
                    recordSharedFailure(uid: uid, skeleton: identity.skeleton, accountID: nil)
                    return .invalidCredentials
                }
                guard hasher.verify(password, against: account.passwordHash) else {
                    // A hash made with cheaper parameters must not answer faster than an
                    // unknown name: pay the current cost too.
                    if hasher.needsRehash(account.passwordHash) { _ = hasher.verify(password, against: decoy()) }
                    limiter.failed(reservation, accountID: account.id, now: now())
                    settled = true
                    recordSharedFailure(uid: uid, skeleton: identity.skeleton, accountID: account.id)
                    logger.notice("login failed", metadata: ["user": "\(account.username)"])
                    return .invalidCredentials
                }
                limiter.succeeded(reservation, accountID: account.id)
                settled = true
                if let shared = sharedLoginFailures {
                    do {
                        try shared.forgetFailures(uid: uid, skeleton: identity.skeleton, accountID: account.id)
                    } catch {
                        logger.warning("cannot forget shared login failures", metadata: ["error": "\(error)"])
                    }
                }
                if hasher.needsRehash(account.passwordHash), let upgraded = try? hasher.hash(password) {
                    try store.updatePasswordHash(accountID: account.id, passwordHash: upgraded)
                }
                let token = LoginTokens.generate()
                try store.storeToken(hash: LoginTokens.hash(token), accountID: account.id, expiresAt: Int64(wallClockSeconds()) + tokenLifetimeSeconds)
                loginCount.add(1, ordering: .relaxed)
                logger.info("login", metadata: ["user": "\(account.username)"])
                return .loggedIn(user: account.username, token: token)
            } catch {
                if !settled { limiter.release(reservation) }
                logger.error("login failed on the store", metadata: ["error": "\(error)"])
                return .storeUnavailable
            }
        }
    }

    /// Records a failed login where every host sees it; this host's limiter has it already.
    private func recordSharedFailure(uid: UInt32, skeleton: String, accountID: Int64?) {
        guard let shared = sharedLoginFailures else { return }
        do {
            try shared.recordFailure(uid: uid, skeleton: skeleton, accountID: accountID)
        } catch {
            logger.warning("cannot record the login failure for other hosts", metadata: ["error": "\(error)"])
        }
    }

    /// Deletes expired login tokens, on the store pool.
    func pruneExpiredTokens(on eventLoop: EventLoop) {
        storePool.runIfActive(eventLoop: eventLoop) { [store] in
            try store.deleteExpiredTokens(now: Int64(wallClockSeconds()))
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
    func logout(token: String, on eventLoop: EventLoop) -> EventLoopFuture<Bool> {
        guard LoginTokens.isWellFormed(token) else { return eventLoop.makeSucceededFuture(false) }
        return storePool.runIfActive(eventLoop: eventLoop) { [store] in
            try store.revokeToken(hash: LoginTokens.hash(token), now: Int64(wallClockSeconds()))
        }
    }

    /// The user a token belongs to, nil when it is unknown, malformed or expired.
    func verify(token: String, on eventLoop: EventLoop) -> EventLoopFuture<String?> {
        guard LoginTokens.isWellFormed(token) else { return eventLoop.makeSucceededFuture(nil) }
        return storePool.runIfActive(eventLoop: eventLoop) { [store] in
            try store.tokenOwner(hash: LoginTokens.hash(token), now: Int64(wallClockSeconds()))
        }
    }
}

/// Seconds since the Unix epoch, for stored timestamps and token expiry.
func wallClockSeconds() -> Int {
    var spec = timespec()
    clock_gettime(CLOCK_REALTIME, &spec)
    return spec.tv_sec
}
