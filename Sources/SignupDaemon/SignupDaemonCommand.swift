import ArgumentParser
import CSystemd
import FormEngine
import Logging
import NIOCore
import NIOPosix
import Protocol
import ServiceLifecycle
import UsernameIdentity

#if canImport(Glibc)
import Glibc
#endif

/// `signupd`: the form-session daemon.
@main
struct SignupDaemonCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "signupd",
        abstract: "Serve sign-up and login form sessions over a Unix socket (protocol signup/1).",
        discussion: """
            Clients connect to the socket, open a form session and send what the user types; \
            signupd validates every field as it changes, decides when submit is enabled, runs \
            the signup or login against its account store, and streams every change back as \
            newline-delimited JSON (see PROTOCOL.md).

            Under systemd it takes its listening socket from socket activation (signupd.socket) \
            and reports readiness and status with sd_notify. Run by hand, it binds --socket itself.
            """,
        version: signupdVersion
    )

    @OptionGroup(title: "Socket and store") var paths: PathOptions
    @OptionGroup(title: "Availability check") var availability: AvailabilityOptions
    @OptionGroup(title: "Limits") var limits: LimitOptions
    @OptionGroup(title: "Passwords and tokens") var security: SecurityOptions

    @Option(help: ArgumentHelp("Seconds without any connection after which to exit (0: never). Default: 60 under socket activation, 0 by hand.", valueName: "seconds"))
    var idleExit: Int?

    @Option(help: ArgumentHelp("Event loop threads.", valueName: "n"))
    var threads: Int = System.coreCount

    @Option(help: ArgumentHelp("Log level: trace, debug, info, notice, warning, error, critical.", valueName: "level"))
    var logLevel: String = "info"

    func validate() throws {
        guard Logger.Level(rawValue: logLevel) != nil else { throw ValidationError("unknown --log-level \"\(logLevel)\"") }
        try checkRange("--threads", threads, 1...256)
        if let idleExit { try checkRange("--idle-exit", idleExit, 0...31_536_000) }
    }

    func run() async throws {
        let level = Logger.Level(rawValue: logLevel) ?? .info
        LoggingSystem.bootstrap { label in
            if DefaultPaths.environment("JOURNAL_STREAM") != nil {
                var handler = JournalLogHandler(label: label)
                handler.logLevel = level
                return handler
            }
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "signupd")
        do {
            try await serve(logger: logger)
        } catch let error as DaemonError {
            logger.critical("cannot start: \(error)")
            throw ExitCode(1)
        } catch let error as AccountStoreError {
            logger.critical("cannot open the account store: \(error)")
            throw ExitCode(1)
        }
    }

    private func serve(logger: Logger) async throws {
        signal(SIGPIPE, SIG_IGN)
        // Whatever signupd creates is private to its user, whatever umask it was started
        // under; the socket gets --socket-mode explicitly once bound.
        umask(0o077)
        try PasswordHasher.initialise()
        let inherited = try SystemdListenFDs.take()
        let configuration = try makeConfiguration(inherited: inherited)
        FileLimit.raise(logger: logger)

        let store: any AccountStore
        switch configuration.store {
        case .memory:
            store = InMemoryAccountStore()
        case .sqlite(let path):
            store = try SQLiteAccountStore(path: path)
            for file in PrivateDirectory.restrictDatabaseFiles(path) {
                logger.notice("made \(file) private (mode 0600): it was readable by others")
            }
        }
        Self.logKeptCollisions(in: store, logger: logger)
        let accounts = AccountService(store: store, configuration: configuration, logger: logger)
        let group = MultiThreadedEventLoopGroup(numberOfThreads: configuration.eventLoopThreads)
        let services = SessionServices(
            accounts: accounts,
            http: configuration.availabilityURL.map { HTTPAvailabilityClient(template: $0, timeout: configuration.availabilityTimeout, group: group) },
            formConfiguration: configuration.formConfiguration,
            registry: ConnectionRegistry(maxConnections: configuration.maxConnections, maxConnectionsPerUID: configuration.maxConnectionsPerUID),
            directory: SessionDirectory(),
            checkBudget: CheckBudget(perUIDPerSecond: configuration.availabilityChecksPerUIDPerSecond, perSessionPerSecond: configuration.availabilityChecksPerSessionPerSecond)
        )
        let server = SignupServer(configuration: configuration, services: services, group: group, notifier: ServiceNotifier(), logger: logger)
        let serviceGroup = ServiceGroup(
            configuration: .init(
                services: [.init(service: server, successTerminationBehavior: .gracefullyShutdownGroup)],
                gracefulShutdownSignals: [.sigterm, .sigint],
                cancellationSignals: [],
                logger: logger
            )
        )
        do {
            try await serviceGroup.run()
        } catch {
            try? await accounts.shutdown()
            try? await group.shutdownGracefully()
            throw error
        }
        try await accounts.shutdown()
        try await group.shutdownGracefully()
    }

    private func makeConfiguration(inherited: (fd: Int32, name: String)?) throws -> DaemonConfiguration {
        let listener: DaemonConfiguration.Listener
        if let inherited {
            listener = .inherited(fd: inherited.fd, name: inherited.name)
        } else {
            let explicit = paths.socket ?? DefaultPaths.environment("SIGNUPD_SOCKET")
            let path = try explicit ?? DefaultPaths.socket()
            // Clients must be able to reach a socket meant for a group: its directory is 0755.
            try PrivateDirectory.prepare(parentOf: path, create: explicit == nil, mode: 0o755, option: paths.socket != nil ? "--socket" : (explicit != nil ? "SIGNUPD_SOCKET" : "socket"))
            // Before anything starts: a live daemon on the path is a clear refusal.
            try SocketPath.prepare(path)
            listener = .path(path, mode: paths.socketModeValue)
        }
        let store: DaemonConfiguration.Store
        if paths.database == ":memory:" {
            store = .memory
        } else {
            let path = try paths.database ?? DefaultPaths.database()
            try PrivateDirectory.prepare(parentOf: path, create: paths.database == nil, mode: 0o700, option: paths.database != nil ? "--database" : "database")
            store = .sqlite(path: path)
        }
        var configuration = DaemonConfiguration(
            listener: listener,
            store: store,
            idleExitSeconds: idleExit.map { $0 == 0 ? nil : $0 } ?? (inherited != nil ? 60 : nil),
            hashCost: security.hashCost,
            hashConcurrency: security.hashConcurrency ?? max(1, System.coreCount),
            eventLoopThreads: threads
        )
        configuration.limits = ServerLimits(
            maxLineBytes: limits.maxLineBytes,
            maxSessionsPerConnection: limits.maxSessionsPerConnection,
            maxOutputBytes: limits.maxOutputBytes
        )
        configuration.maxConnections = limits.maxConnections
        configuration.maxConnectionsPerUID = limits.maxConnectionsPerUser
        configuration.maxTotalOutputBytes = limits.maxTotalOutputBytes
        configuration.availabilityChecksPerUIDPerSecond = limits.availabilityChecksPerSecond
        configuration.availabilityChecksPerSessionPerSecond = limits.availabilityChecksPerSessionPerSecond
        configuration.idleConnectionSeconds = limits.idleConnectionTimeout == 0 ? nil : limits.idleConnectionTimeout
        configuration.expensiveRequestsPerSecond = limits.maxExpensiveRequestsPerSecond
        configuration.loginAttemptsPerMinute = security.loginAttemptsPerMinute
        configuration.maxQueuedHashesPerUID = security.maxQueuedHashesPerUser
        configuration.maxQueuedHashes = security.maxQueuedHashes
        configuration.tokenLifetimeSeconds = Int64(security.tokenLifetime)
        configuration.availabilityTimeout = Duration.milliseconds(Int64(availability.availabilityTimeout * 1000))
        if let template = availability.availabilityURL {
            do {
                configuration.availabilityURL = try AvailabilityURLTemplate(template)
            } catch {
                throw DaemonError.startup("--availability-url: \(error)")
            }
        }
        return configuration
    }

    /// Says once, at start, which accounts from before Unicode identity keys collide
    /// under them: all are kept and can log in, no new name may join them.
    private static func logKeptCollisions(in store: any AccountStore, logger: Logger) {
        guard let collisions = try? store.keptCollisions(), !collisions.isEmpty else { return }
        let groups = collisions.map { $0.usernames.map { "\"\($0)\"" }.joined(separator: " ~ ") }.joined(separator: "; ")
        logger.warning(
            "accounts kept although their names collide under Unicode identity keys (\(Usernames.keyVersion)); each can log in, no new signup may take a colliding name",
            metadata: ["collisions": "\(groups)", "count": "\(collisions.count)"]
        )
    }
}
