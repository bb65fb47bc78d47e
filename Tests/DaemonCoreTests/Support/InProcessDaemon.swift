import FormEngine
import Foundation
import Logging
import NIOCore
import Testing
import UsernameIdentity
import NIOEmbedded
import SignupProtocol
@testable import SignupDaemonCore

/// The daemon's shared state (store, registry, sessions, budgets) without a socket or a
/// process: connections are `NIOAsyncTestingChannel`s on one testing event loop, whose
/// virtual time is also the daemon's clock, so budgets refill and timers fire only when a
/// test advances it.
final class InProcessDaemon: Sendable {
    enum StoreKind: Sendable, CustomStringConvertible {
        case memory
        case sqliteFile
        /// Every operation fails, as a store on a lost disk would.
        case unavailable
        /// A store the test provides.
        case custom(any AccountStore)

        var description: String {
            switch self {
            case .memory: "in-memory store"
            case .sqliteFile: "SQLite store on a temporary file"
            case .unavailable: "an unavailable store"
            case .custom(let store): "\(type(of: store))"
            }
        }
    }

    let loop: NIOAsyncTestingEventLoop
    let services: SessionServices
    let context: ConnectionHandler.Context
    private let databaseDirectory: String?

    /// The daemon's own defaults (`DaemonTuning`), but for what the in-process tier sets
    /// apart: 100 connections (per uid too), no connect budget and no idle-connection timer,
    /// so that a test meets only the limit it is about.
    static var tuning: DaemonTuning {
        var tuning = DaemonTuning()
        tuning.maxConnections = 100
        tuning.maxConnectionsPerUID = 100
        tuning.connectsPerUIDPerSecond = nil
        tuning.idleConnectionSeconds = nil
        return tuning
    }

    init(
        store kind: StoreKind = .memory,
        limits: ServerLimits? = nil,
        expensiveRequestsPerSecond: Int? = nil,
        tokenChecksPerSecond: Int? = nil,
        idleConnectionTimeout: TimeAmount? = nil,
        maxConnections: Int? = nil,
        connectsPerUIDPerSecond: Int? = nil,
        linesPerUIDPerTurn: Int = 256,
        trustedBridgeUIDs: Set<UInt32> = [],
        maxConnectionsPerClient: Int? = nil,
        startGate: StartGate = StartGate(),
        tuned: (inout DaemonTuning) -> Void = { _ in }
    ) throws {
        var tuning = Self.tuning
        if let limits { tuning.limits = limits }
        if let expensiveRequestsPerSecond { tuning.expensiveRequestsPerSecond = expensiveRequestsPerSecond }
        if let tokenChecksPerSecond { tuning.tokenChecksPerSecond = tokenChecksPerSecond }
        if let idleConnectionTimeout { tuning.idleConnectionSeconds = Int(idleConnectionTimeout.nanoseconds / 1_000_000_000) }
        if let maxConnections {
            tuning.maxConnections = maxConnections
            tuning.maxConnectionsPerUID = maxConnections
        }
        if let connectsPerUIDPerSecond { tuning.connectsPerUIDPerSecond = connectsPerUIDPerSecond }
        if let maxConnectionsPerClient { tuning.maxConnectionsPerClient = maxConnectionsPerClient }
        tuned(&tuning)
        try PasswordHasher.initialise()
        let loop = NIOAsyncTestingEventLoop()
        self.loop = loop
        let store: any AccountStore
        switch kind {
        case .memory:
            store = InMemoryAccountStore()
            databaseDirectory = nil
        case .sqliteFile:
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("signupd-core-\(UUID().uuidString)").path
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            databaseDirectory = directory
            store = try SQLiteAccountStore(path: directory + "/accounts.sqlite")
        case .unavailable:
            store = UnavailableStore()
            databaseDirectory = nil
        case .custom(let custom):
            store = custom
            databaseDirectory = nil
        }
        var configuration = DaemonConfiguration(
            listener: .path("/nonexistent", mode: 0o600), store: .memory,
            // libsodium's minimum cost: still Argon2id, in milliseconds.
            hashCost: .init(operations: 1, memoryBytes: 8192), hashConcurrency: 1, eventLoopThreads: 1
        )
        configuration.tuning = tuning
        var formConfiguration = configuration.formConfiguration
        formConfiguration.catalogues = FormLibrary.builtin.catalogues
        formConfiguration.passwordQuality = PasswordQualityCheck { _, _ in nil }
        let logger = Logger(label: "signupd-test") { _ in SwiftLogNoOpLogHandler() }
        let clock = DaemonClock { [loop] in loop.now }
        services = SessionServices(
            accounts: AccountService(store: store, configuration: configuration, logger: logger, clock: clock),
            http: nil,
            formConfiguration: formConfiguration,
            forms: FormLibraryHolder(FormLibrary.builtin),
            registry: ConnectionRegistry(
                maxConnections: tuning.maxConnections, maxConnectionsPerUID: tuning.maxConnectionsPerUID,
                maxConnectionsPerClient: tuning.maxConnectionsPerClient, maxConnectionsPerBridge: tuning.maxConnectionsPerBridge,
                connectsPerUIDPerSecond: tuning.connectsPerUIDPerSecond, clock: clock
            ),
            directory: SessionDirectory(maxDetachedPerPeer: tuning.maxResumableSessionsPerUser),
            checkBudget: CheckBudget(perUIDPerSecond: tuning.availabilityChecksPerUIDPerSecond, perSessionPerSecond: tuning.availabilityChecksPerSessionPerSecond),
            sessionIdleTimeout: tuning.sessionIdleSeconds.map { .seconds(Int64($0)) },
            resumeGrace: tuning.resumeGraceSeconds.map { .seconds(Int64($0)) },
            clock: clock,
            maxViewsPerSession: tuning.maxViewsPerSession,
            sessionBytes: SessionBytes(limit: tuning.maxSessionBytes),
            bufferBudget: BufferBudget(limit: tuning.maxBufferedBytes, clock: clock)
        )
        // As SignupServer does: open sessions hear of a sign-up pause.
        services.tellSessionsOfPauses()
        context = ConnectionHandler.Context(
            services: services,
            tuning: tuning,
            // Shares counted in lines only: the work clock is virtual too, so a slow test
            // machine cannot change what a test sees. A turn every virtual millisecond.
            fairTurns: FairTurnsByLoop(
                linesPerUIDPerTurn: linesPerUIDPerTurn, turnInterval: .milliseconds(1), clock: services.clock, workClock: { [loop] in loop.now }
            ),
            serverName: "signupd/test",
            logger: logger,
            trustedBridges: TrustedBridges(uids: trustedBridgeUIDs),
            startGate: startGate
        )
    }

    /// A new client connection, past its `hello` (or refused: then the refusal is unread).
    /// A testing channel has no `SO_PEERCRED`: the connection is `uid`'s.
    func connect(readHello: Bool = true, uid: UInt32 = 1000) async throws -> TestClient {
        let channel = NIOAsyncTestingChannel(loop: loop)
        let context = self.context
        try await loop.executeInContext {
            try channel.pipeline.syncOperations.addHandler(ConnectionHandler(context: context, peer: PeerCredentials(pid: 1, uid: uid, gid: uid)))
        }
        try await channel.connect(to: SocketAddress(unixDomainSocketPath: "/signupd-test.sock")).get()
        let client = TestClient(channel: channel, loop: loop)
        if readHello { #expect(try await client.next().event == "hello") }
        return client
    }

    /// Moves virtual time on, running whatever falls due.
    func advance(by amount: TimeAmount) async {
        await loop.advanceTime(by: amount)
    }

    /// Stops the account service's threads and removes the temporary database.
    func stop() async throws {
        try await services.accounts.shutdown()
        if let databaseDirectory { try? FileManager.default.removeItem(atPath: databaseDirectory) }
    }
}

/// A test store: every operation fails unless the store says otherwise.
protocol StubStore: AccountStore {}

extension StubStore {
    private var failure: AccountStoreError { .unavailable("disk gone (test)") }
    func availability(of identity: UsernameIdentity) async throws(AccountStoreError) -> NameAvailability { throw failure }
    func createAccount(_ identity: UsernameIdentity, passwordHash: String, createdAt: Int64) async throws(AccountStoreError) -> NameAvailability { throw failure }
    func account(for identity: UsernameIdentity) async throws(AccountStoreError) -> StoredAccount? { throw failure }
    func updatePasswordHash(accountID: Int64, passwordHash: String) async throws(AccountStoreError) { throw failure }
    func storeToken(hash: [UInt8], accountID: Int64, expiresAt: Int64) async throws(AccountStoreError) { throw failure }
    func tokenOwner(hash: [UInt8], now: Int64) async throws(AccountStoreError) -> String? { throw failure }
    func revokeToken(hash: [UInt8], now: Int64) async throws(AccountStoreError) -> Bool { throw failure }
    func deleteExpiredTokens(now: Int64) async throws(AccountStoreError) -> Int { throw failure }
    func keptCollisions() async throws(AccountStoreError) -> [KeptCollision] { throw failure }
    func signupPause() async throws(AccountStoreError) -> StoredSignupPause? { throw failure }
    func setSignupPause(_ pause: StoredSignupPause?) async throws(AccountStoreError) { throw failure }
}

/// A store whose every operation fails.
struct UnavailableStore: StubStore {}

/// A store whose reads (availability, the account a login looks up, a token's owner) wait
/// until the test opens the gate, one read per `signal()`, then find nothing:
/// `InProcessDaemon.withStalledStore`.
final class StalledStore: StubStore {
    let gate = AsyncGate()

    func availability(of identity: UsernameIdentity) async throws(AccountStoreError) -> NameAvailability {
        await gate.wait()
        return .available
    }

    func account(for identity: UsernameIdentity) async throws(AccountStoreError) -> StoredAccount? {
        await gate.wait()
        return nil
    }

    func tokenOwner(hash: [UInt8], now: Int64) async throws(AccountStoreError) -> String? {
        await gate.wait()
        return nil
    }
}

extension InProcessDaemon {
    /// Runs `body` with a daemon whose store reads never end while it runs and a client that
    /// has opened `form`; then lets the stalled reads end and stops the daemon.
    static func withStalledStore(form: String, _ body: (InProcessDaemon, TestClient) async throws -> Void) async throws {
        let store = StalledStore()
        let daemon = try InProcessDaemon(store: .custom(store))
        let client = try await daemon.connect()
        try await client.send(#"{"op":"open","form":"\#(form)"}"#)
        try await body(daemon, client)
        store.gate.signal()  // a stalled read may end now; its answer is ignored
        try await daemon.stop()
    }
}
