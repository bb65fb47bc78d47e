import CSystemd
import FormEngine
import Logging
import NIOCore
import NIOPosix
import SignupProtocol
import ServiceLifecycle
import UnixIO
import UsernameIdentity

#if canImport(Glibc)
import Glibc
#endif

/// `signupd`: the form-session daemon. Its `@main` entry is the `signupd` target's.
public struct SignupDaemonCommand: CommandLineCommand, Sendable {
    static let commandName = "signupd"
    static let abstract = "Serve sign-up and login form sessions over a Unix socket (protocol signup/1)."
    static let discussion = """
        Clients connect to the socket, open a form session and send what the user types; \
        signupd validates every field as it changes, decides when submit is enabled, runs \
        the signup or login against its account store, and streams every change back as \
        newline-delimited JSON (signupd-protocol(7); PROTOCOL.md in /usr/share/doc/signupd).

        Under systemd it takes its listening socket from socket activation (signupd.socket) \
        and reports readiness and status with sd_notify. Run by hand, it binds --socket itself.
        """
    static let version = signupdVersion

    /// Every option, in the order and sections `--help` lists them.
    static var options: [CommandLineOption<Self>] {
        PathOptions.options.map { $0.lifted(\.paths, section: "Socket and store") }
            + PostgresOptions.options.map { $0.lifted(\.postgres, section: "PostgreSQL store") }
            + AvailabilityOptions.options.map { $0.lifted(\.availability, section: "Availability check") }
            + LimitOptions.options.map { $0.lifted(\.limits, section: "Limits") }
            + SecurityOptions.options.map { $0.lifted(\.security, section: "Passwords and tokens") }
            + FrontEndOptions.options.map { $0.lifted(\.frontEnds, section: "Front ends and resuming") }
            + [
                .option("idle-exit", \.idleExit, valueName: "seconds", help: "Seconds without any connection after which to exit (0: never). Default: 60 under socket activation, 0 by hand."),
                .option("threads", \.threads, valueName: "n", help: "Event loop threads (default: the number of CPUs signupd may run on)."),
                .option("pin-event-loops", \.pinEventLoops, valueName: "auto|no", help: "Pin each event loop thread to a CPU of its own: auto (when there is one loop per CPU signupd may run on) or no."),
                .option("log-level", \.logLevel, valueName: "level", completion: .words(Logger.Level.allCases.map(\.rawValue)), help: "Log level: trace, debug, info, notice, warning, error, critical."),
            ]
            + FormOptions.options.map { $0.lifted(\.forms, section: "Forms and messages") }
            + OperatorOptions.options.map { $0.lifted(\.operators, section: "Metrics and administration") }
    }

    var paths = PathOptions()
    var postgres = PostgresOptions()
    var availability = AvailabilityOptions()
    var limits = LimitOptions()
    var security = SecurityOptions()
    var frontEnds = FrontEndOptions()
    var idleExit: Int?
    var threads: Int?
    var pinEventLoops = "auto"
    var logLevel = "info"
    var forms = FormOptions()
    var operators = OperatorOptions()

    init() {}

    /// Parses the command line, checks it, and runs: the process's exit status follows from
    /// how (0; 64 for a usage error, with the usage; 1 for a start that failed, said why).
    public static func main() async {
        var standardError = StandardError()
        let command: Self
        do {
            switch try parse(Array(CommandLine.arguments.dropFirst())) {
            case .help: exit(print: helpText, status: 0)
            case .version: exit(print: version + "\n", status: 0)
            case .dumpHelp: exit(print: dumpHelpJSON, status: 0)
            case .completionScript(let shell): exit(print: completionScript(for: shell), status: 0)
            case .run(let parsed):
                try parsed.validate()
                command = parsed
            }
        } catch {
            exit(usageError: error)
        }
        do {
            try await command.run()
        } catch let error as UsageError {
            exit(usageError: error)
        } catch let status as ExitStatus {
            Glibc.exit(status.code)
        } catch {
            print("\(JournalStream.errorPrefix)Error: \(error)", to: &standardError)
            Glibc.exit(1)
        }
        Glibc.exit(0)
    }

    private static func exit(print text: String, status: Int32) -> Never {
        UnixIO.writeAll(1, Array(text.utf8))
        Glibc.exit(status)
    }

    private static func exit(usageError error: any Error) -> Never {
        var standardError = StandardError()
        var text = "\(JournalStream.errorPrefix)Error: \(error)\n"
        if let usage = error as? UsageError, let help = usage.optionHelp { text += "Help:  \(help)\n" }
        print(text + usage, to: &standardError)
        // Under systemd, `systemctl status` says why too, as for a start that failed.
        if DefaultPaths.environment("NOTIFY_SOCKET") != nil {
            let notifier = ServiceNotifier()
            notifier.status("cannot start: \(error)")
            _ = notifier.waitUntilSent(atMost: .seconds(1))
        }
        Glibc.exit(UsageError.exitStatus)
    }

    /// Every option group's checks, then those between groups.
    func validate() throws {
        try paths.validate()
        try postgres.validate()
        try availability.validate()
        try limits.validate()
        try security.validate()
        try frontEnds.validate()
        try operators.validate()
        guard Logger.Level(rawValue: logLevel) != nil else {
            throw UsageError("unknown --log-level \"\(logLevel)\"; one of: \(Logger.Level.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        if let threads { try checkRange("--threads", threads, 1...256) }
        guard EventLoopPinning(rawValue: pinEventLoops) != nil else {
            throw UsageError("unknown --pin-event-loops \"\(pinEventLoops)\"; one of: \(EventLoopPinning.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        if let idleExit { try checkRange("--idle-exit", idleExit, 0...31_536_000) }
        if let pid = forms.checkConfigOf {
            guard forms.checkConfig else { throw UsageError("--check-config-of is for --check-config: it names the signupd whose forms to check") }
            try checkRange("--check-config-of", pid, 1...Int(Int32.max))
        }
        try postgres.checkOnlyWithPostgres(database: paths.database)
    }

    func run() async throws {
        if forms.checkConfig {
            // Like sshd -t and nginx -t: read everything, say what is wrong, start nothing.
            // Run by `systemctl reload` (ExecReload=), its lines reach the journal at err and
            // warning, so `journalctl -p warning` shows why a reload failed (helper-49: at info).
            var directories = try forms.checkedDirectories()
            directories.reader = try ConfigReader.forCheck(of: forms.checkConfigOf)
            switch directories.load() {
            case .success(let library):
                var stderr = StandardError()
                // Run by `systemctl reload` (stderr is the journal), the warnings are the
                // daemon's to log once it has reloaded: here too, each was in the journal twice
                // (helper-50). Run by hand, they are printed.
                if !JournalStream.isStandardError() {
                    for warning in library.warnings { print(warning.description, to: &stderr) }
                }
                let names = library.forms.map { "\($0.name) (\(library.sources[$0.name] ?? "?"))" }.joined(separator: ", ")
                // Not the configuration, but what the next start would say at critical; root
                // tries the library as the package's user, which may not read what root can.
                let serviceUser = geteuid() == 0 ? SystemAccounts.ids(ofUser: "signupd") : nil
                if case .failure(let unusable) = PhoneLibrary.check(as: serviceUser) {
                    print(JournalStream.warningPrefix + "signupd: warning: phone numbers cannot be checked: \(unusable); \(PhoneLibrary.remedy)", to: &stderr)
                }
                print("signupd: configuration OK: \(library.forms.count) forms: \(names); locales: \(library.catalogues.locales.joined(separator: ", "))")
                return
            case .failure(let errors):
                var stderr = StandardError()
                let prefix = JournalStream.errorPrefix
                for error in errors.errors { print(prefix + error.description, to: &stderr) }
                print(prefix + "signupd: configuration has \(errors.errors.count) error\(errors.errors.count == 1 ? "" : "s")", to: &stderr)
                throw ExitStatus(1)
            }
        }
        let level = Logger.Level(rawValue: logLevel) ?? .info
        let journal = JournalStream.isStandardError()
        LoggingSystem.bootstrap { label in
            if journal {
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
            Self.startFailed("cannot start: \(error)", logger: logger)
            throw ExitStatus(1)
        } catch AccountStoreError.unavailable(let reason) {
            Self.startFailed("cannot open the account store: \(reason)", logger: logger)
            throw ExitStatus(1)
        }
    }

    private func serve(logger: Logger) async throws {
        // From main's first line when signupd's main ran (not in the tests), the command
        // line's parse and checks its first stage.
        var startup = TimedStages(now: MainStarted.at ?? .now)
        if MainStarted.at != nil { startup.finished("arguments") }
        signal(SIGPIPE, SIG_IGN)
        // Whatever signupd creates is private to its user, whatever umask it was started
        // under; the socket gets --socket-mode explicitly once bound.
        umask(0o077)
        try PasswordHasher.initialise()
        let (inherited, stored) = try SystemdListenFDs.take()
        var configuration = try makeConfiguration(inherited: inherited)
        FileLimit.fit(&configuration, logger: logger)
        startup.finished("options")
        // The SQLite store is opened once the socket is served (issue 29, the cold start):
        // the first `hello` does not wait for it, the first request does (StartGate). Its
        // owner is checked here, before anything is served.
        let sqlite: OpeningAccountStore? = if case .sqlite(let path) = configuration.store { try Self.openSQLite(path, logger: logger) } else { nil }
        // The event loops before the forms, so that while this thread reads the forms they
        // pay the first connection's costs and make the metrics' registry (its first series:
        // Prometheus's and the runtime's first-use work), which `accounts` then takes.
        let group = MultiThreadedEventLoopGroup(numberOfThreads: configuration.eventLoopThreads)
        let eventLoops = configuration.eventLoopPinning.apply(to: group, logger: logger)
        let metricsMade = group.next().submit { DaemonMetrics(version: signupdVersion) }
        FirstConnectionWarmUp.start(on: group, outputCap: configuration.limits.maxOutputBytes)
        startup.finished("event loops")
        let lastGood = configuration.lastGoodFormsPath.map(LastGoodForms.init(path:))
        let formLibrary = try FormStartup.load(configuration.formDirectories, lastGood: lastGood, now: Int64(wallClockSeconds()), logger: logger)
        startup.finished("forms")
        let store: any AccountStore
        // Known here rather than cast from `store` (a cast is two conformance scans of the
        // whole binary, ~0.1 ms of every start).
        var postgresStore: PostgresAccountStore?
        // The PostgreSQL pool runs as the group's first service, so it stops last.
        var storeServices: [ServiceGroupConfiguration.ServiceConfiguration] = []
        switch configuration.store {
        case .memory:
            store = InMemoryAccountStore()
        case .postgres(let settings):
            let postgres = try await PostgresStoreStartup.open(settings, eventLoopGroup: group, logger: logger)
            store = postgres
            postgresStore = postgres
            storeServices.append(.init(service: postgres.client, serviceName: "PostgresClient"))
        case .sqlite(let path):
            store = try sqlite ?? Self.openSQLite(path, logger: logger)
        }
        // The SQLite store's open is waited for once the socket is served.
        var opening: SignupServer.Opening?
        if let sqlite {
            opening = { (stages: inout TimedStages) async throws in
                _ = try await sqlite.opened()
                stages.finished("store")
                await Self.logKeptCollisions(in: sqlite, logger: logger)
                stages.finished("kept collisions")
            }
        } else {
            startup.finished("store")
        }
        let accounts = AccountService(
            store: store, configuration: configuration, logger: logger,
            sharedLoginFailures: postgresStore.map { PostgresLoginFailures(store: $0) }, metrics: try await metricsMade.get()
        )
        startup.finished("accounts")
        let formConfiguration = Self.formConfiguration(configuration, logger: logger)
        if let url = configuration.availabilityURL {
            logger.info("availability service", metadata: [
                "service": "\(url.isHTTPS ? "https" : "http")://\(url.hostHeader)",
                "trust": "\(configuration.availabilityTLS?.trust ?? "none (http)")",
            ])
            for warning in configuration.availabilityTLS?.warnings ?? [] { logger.warning("\(warning)") }
            if url.isHTTPS, availability.availabilityCAFile == nil, !AvailabilityTLS.systemStoreFound {
                logger.warning("no system trust store to verify the availability service's certificate with (install ca-certificates, or give --availability-ca-file): every check will answer \"Error contacting server\"", metadata: ["lookedAt": "\(AvailabilityTLS.systemBundles.joined(separator: ", "))"])
            }
        }
        let services = SessionServices(
            accounts: accounts,
            http: configuration.availabilityURL.map {
                HTTPAvailabilityClient(template: $0, timeout: configuration.availabilityTimeout, tls: configuration.availabilityTLS, group: group, logger: logger)
            },
            formConfiguration: formConfiguration,
            forms: formLibrary,
            registry: ConnectionRegistry(
                maxConnections: configuration.maxConnections, maxConnectionsPerUID: configuration.maxConnectionsPerUID,
                maxConnectionsPerClient: configuration.maxConnectionsPerClient, maxConnectionsPerBridge: configuration.maxConnectionsPerBridge,
                connectsPerUIDPerSecond: configuration.connectsPerUIDPerSecond, unthrottledUIDs: [0, getuid()]
            ),
            directory: SessionDirectory(maxDetachedPerPeer: configuration.maxResumableSessionsPerUser),
            checkBudget: CheckBudget(perUIDPerSecond: configuration.availabilityChecksPerUIDPerSecond, perSessionPerSecond: configuration.availabilityChecksPerSessionPerSecond),
            sessionIdleTimeout: configuration.sessionIdleSeconds.map { .seconds(Int64($0)) },
            resumeGrace: configuration.resumeGraceSeconds.map { .seconds(Int64($0)) },
            maxViewsPerSession: configuration.maxViewsPerSession,
            sessionBytes: SessionBytes(limit: configuration.maxSessionBytes),
            bufferBudget: BufferBudget(limit: configuration.maxBufferedBytes)
        )
        // One notifier for the process: its messages leave in the order they were asked for.
        let notifier = ServiceNotifier()
        let reloads = await FormReloader.start(FormReloader(directories: configuration.formDirectories, holder: services.forms, lastGood: lastGood, notifier: notifier, logger: logger))
        defer { reloads.cancel() }
        // Handover (issue 16): under systemd, connections and sessions survive a restart.
        // Only a service manager that keeps a file descriptor store: systemd, which names
        // every service run ($INVOCATION_ID); not systemd-socket-activate or a test harness.
        let underSystemd = inherited != nil && notifier.enabled && DefaultPaths.environment("INVOCATION_ID") != nil
        let handover =
            underSystemd
            ? HandoverCoordinator(
                inherited: stored, logger: logger, budget: CarryBudget(maxTotal: configuration.maxCarriedConnections),
                idleAfter: .seconds(Int64(configuration.carryIdleSeconds)), stateLimit: configuration.maxHandoverBytes)
            : nil
        if handover == nil { stored.closeAll() }
        startup.finished("services")
        let server = SignupServer(
            configuration: configuration, services: services, group: group, notifier: notifier, logger: logger, handover: handover, startup: startup,
            eventLoops: eventLoops, opening: opening
        )
        // What a start that fails from here on undoes before it says why.
        let unwind = { @Sendable () async in
            await services.http?.shutdown()
            try? await accounts.shutdown()
            try? await group.shutdownGracefully()
            notifier.waitUntilSent(atMost: .seconds(1))
        }
        // The socket is served before the service group is set up: clients are greeted meanwhile.
        do {
            try await server.serveSocket()
        } catch {
            await unwind()
            throw error
        }
        let restarts = await HandoverSignal.start(server)
        defer { restarts.cancel() }
        let serviceGroup = ServiceGroup(
            configuration: .init(
                // Each service named: without a name, ServiceLifecycle describes the service
                // ("\(service)", reflection and casts), 0.7 ms of every cold start.
                services: storeServices + [.init(service: server, successTerminationBehavior: .gracefullyShutdownGroup, serviceName: "SignupServer")],
                gracefulShutdownSignals: [.sigterm, .sigint],
                cancellationSignals: [],
                logger: logger
            )
        )
        do {
            try await serviceGroup.run()
        } catch {
            await unwind()
            throw error
        }
        // The availability client's connections and timers end while the loops still run.
        await services.http?.shutdown()
        try await accounts.shutdown()
        try await group.shutdownGracefully()
        // STOPPING=1 and the last status reach systemd (if it reads) before the exit.
        notifier.waitUntilSent(atMost: .seconds(1))
        if server.handedOver { throw ExitStatus(SignupServer.handedOverExitStatus) }
    }

    private func makeConfiguration(inherited: (fd: Int32, name: String)?) throws -> DaemonConfiguration {
        let listener: DaemonConfiguration.Listener
        if let inherited {
            listener = .inherited(fd: inherited.fd, name: inherited.name)
        } else {
            let explicit = paths.socket ?? DefaultPaths.environment("SIGNUPD_SOCKET")
            let path = try explicit ?? DefaultPaths.socket()
            // Clients must be able to reach a socket meant for a group: its directory is 0755.
            try PrivateDirectory.prepare(parentOf: path, create: explicit == nil, mode: 0o755, option: paths.socket != nil ? "--socket" : (explicit != nil ? "SIGNUPD_SOCKET" : "socket"), sharedSticky: true)
            // Before anything starts: a live daemon on the path is a clear refusal.
            try SocketPath.prepare(path)
            listener = .path(path, mode: paths.socketModeValue)
        }
        let store: DaemonConfiguration.Store
        if paths.database == ":memory:" {
            store = .memory
        } else if let database = paths.database, PostgresURL.isPostgres(database) {
            let url: PostgresURL
            do {
                url = try PostgresURL(database, environment: DefaultPaths.environment)
            } catch {
                throw DaemonError.startup("--database: \(error)")
            }
            store = .postgres(PostgresStoreSettings(
                url: url, password: try postgres.password(), poolSize: postgres.databasePoolSize ?? DaemonTuning.standard.databasePoolSize,
                timeout: postgres.databaseTimeout.map { .milliseconds(Int64($0 * 1000)) } ?? DaemonTuning.standard.databaseTimeout
            ))
        } else {
            let path = try paths.database ?? DefaultPaths.database()
            try PrivateDirectory.prepare(parentOf: path, create: paths.database == nil, mode: 0o700, option: paths.database != nil ? "--database" : "database")
            store = .sqlite(path: path)
        }
        let lastGoodDirectory: String? = switch store {
        case .memory: nil
        case .postgres: DefaultPaths.environment("STATE_DIRECTORY").flatMap { $0.split(separator: ":").first.map(String.init) }
        case .sqlite(let path): PrivateDirectory.parent(of: path)
        }
        // One look at the affinity mask for both defaults.
        let cpus = UsableCPUs.count
        var configuration = DaemonConfiguration(
            listener: listener,
            store: store,
            idleExitSeconds: idleExit.map { $0 == 0 ? nil : $0 } ?? (inherited != nil ? 60 : nil),
            hashCost: security.hashCost,
            hashConcurrency: security.hashConcurrency ?? cpus,
            eventLoopThreads: threads ?? cpus,
            eventLoopPinning: EventLoopPinning(rawValue: pinEventLoops) ?? .auto
        )
        limits.apply(to: &configuration.tuning)
        security.apply(to: &configuration.tuning)
        availability.apply(to: &configuration.tuning)
        frontEnds.apply(to: &configuration.tuning)
        if configuration.maxConnectionsPerBridge > configuration.maxConnections {
            // The default (8,192) follows a smaller --max-connections down to half of it; a
            // value given explicitly must fit.
            guard frontEnds.maxConnectionsPerBridge == nil else {
                throw UsageError("--max-connections-per-bridge \(configuration.maxConnectionsPerBridge) is more than --max-connections \(configuration.maxConnections); a front end's ceiling cannot exceed the total")
            }
            configuration.tuning.maxConnectionsPerBridge = max(1, configuration.maxConnections / 2)
        }
        // Usage errors (exit 64), as validate() found them before.
        configuration.trustedBridges = try frontEnds.trustedBridges()
        configuration.administrators = try operators.administrators()
        configuration.metricsListeners = try operators.metricsListeners()
        if let seconds = operators.logSummarySeconds { configuration.logSummarySeconds = seconds }
        configuration.formDirectories = forms.directories
        configuration.lastGoodFormsPath = lastGoodDirectory.map { ($0.hasSuffix("/") ? $0 : $0 + "/") + LastGoodForms.fileName }
        if let template = availability.availabilityURL {
            do {
                configuration.availabilityURL = try AvailabilityURLTemplate(template)
            } catch {
                throw DaemonError.startup("--availability-url: \(error)")
            }
            if configuration.availabilityURL?.isHTTPS == true {
                configuration.availabilityTLS = try AvailabilityTLS.load(caFile: availability.availabilityCAFile)
            }
        }
        return configuration
    }

    /// The engine's configuration, with the system's password-quality policy. Should
    /// libpwquality fail to initialise, `password-quality` rules refuse every password
    /// (fail closed) and the reason is logged.
    private static func formConfiguration(_ configuration: DaemonConfiguration, logger: Logger) -> FormConfiguration {
        var formConfiguration = configuration.formConfiguration
        // Set up at the first password checked, or by this warm-up beside the last stages,
        // whichever comes first (issue 29, the cold start: cracklib's dictionary took 0.5 ms).
        let quality = DeferredPasswordQuality(logger: logger)
        formConfiguration.passwordQuality = PasswordQualityCheck { password, user in quality.check.check(password, user) }
        Task.detached(priority: .utility) { _ = quality.check }
        return formConfiguration
    }

    /// Says why the start failed in the journal and, under systemd, in `systemctl status`
    /// (`STATUS=`: where signupctl sends people, and where a journal may not show it).
    private static func startFailed(_ why: String, logger: Logger) {
        logger.critical("\(why)")
        let notifier = ServiceNotifier()
        notifier.status(why)
        _ = notifier.waitUntilSent(atMost: .seconds(1))
    }

    /// The SQLite store at `path`, opened at its first use (`SignupServer`'s opening, once the
    /// socket is served); its owner is checked now (a database of another user refuses the
    /// start at once).
    private static func openSQLite(_ path: String, logger: Logger) throws -> OpeningAccountStore {
        try PrivateDirectory.checkDatabaseOwner(path)
        return OpeningAccountStore { () throws(AccountStoreError) in
            let store = try SQLiteAccountStore(path: path)
            for file in PrivateDirectory.restrictDatabaseFiles(path) {
                logger.notice("made \(file) private (mode 0600): it was readable by others")
            }
            return store
        }
    }

    /// Says once, at start, which accounts from before Unicode identity keys collide
    /// under them: all are kept and can log in, no new name may join them.
    private static func logKeptCollisions(in store: any AccountStore, logger: Logger) async {
        guard let collisions = try? await store.keptCollisions(), !collisions.isEmpty else { return }
        let groups = collisions.map { $0.usernames.map { "\"\($0)\"" }.joined(separator: " ~ ") }.joined(separator: "; ")
        logger.warning(
            "accounts kept although their names collide under Unicode identity keys (\(SimilarityKeyOwners.keyVersion)); each can log in, no new signup may take a colliding name",
            metadata: ["collisions": "\(groups)", "count": "\(collisions.count)"]
        )
    }
}
