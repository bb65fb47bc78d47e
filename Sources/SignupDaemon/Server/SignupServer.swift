import CSystemd
import FormEngine
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import SignupProtocol
import ServiceLifecycle
import UsernameIdentity

#if canImport(Glibc)
import Glibc
#endif

/// The daemon as a service: serves the socket until told to stop (SIGTERM, SIGINT, or
/// idle exit), then drains: no new sessions or submits, in-flight signups and logins
/// finish and are answered, every client gets a `bye`, and `run` returns.
final class SignupServer: Service {
    private let configuration: DaemonConfiguration
    private let services: SessionServices
    private let group: MultiThreadedEventLoopGroup
    private let notifier: ServiceNotifier
    private let logger: Logger
    private let stop = StopSignal()
    /// Carries sessions across restarts (issue 16); nil when not under systemd.
    private let handover: HandoverCoordinator?
    /// How long the start took so far, per stage; `run` adds its own and logs them with `serving`.
    private let startup: TimedStages
    /// The event loops and where they run (`EventLoopPinning.apply`), said with `serving`.
    private let eventLoops: String
    /// What the start finishes once the socket is served (the SQLite store's open:
    /// `OpeningAccountStore`, `StartGate`), timing its own stages.
    typealias Opening = @Sendable (inout TimedStages) async throws -> Void
    private let opening: Opening?
    private let handedOverBox = NIOLockedValueBox(false)
    /// Whether this process ended by handing its sessions to the next one: it then exits
    /// with `handedOverExitStatus`, so that a hand-over nobody asked systemd for (a SIGUSR1
    /// sent by hand) is followed by a start that picks the sessions up.
    var handedOver: Bool { handedOverBox.withLockedValue { $0 } }
    /// The unit lists it in SuccessExitStatus= and RestartForceExitStatus= (EX_TEMPFAIL).
    static let handedOverExitStatus: Int32 = 75

    init(
        configuration: DaemonConfiguration, services: SessionServices, group: MultiThreadedEventLoopGroup, notifier: ServiceNotifier, logger: Logger,
        handover: HandoverCoordinator? = nil, startup: TimedStages = TimedStages(), eventLoops: String = "", opening: Opening? = nil
    ) {
        self.eventLoops = eventLoops
        self.opening = opening
        self.configuration = configuration
        self.startup = startup
        self.services = services
        self.group = group
        self.notifier = notifier
        self.logger = logger
        self.handover = handover
    }

    /// The restart signal arrived: hand over instead of saying `bye` (see `HandoverSignal`).
    func handOver() {
        stop.fire(handover == nil ? .shutdown : .handover)
    }

    /// The socket served by `serveSocket`, with what `run` carries on with.
    private struct Listening: Sendable {
        let channel: Channel
        let context: ConnectionHandler.Context
        let gate: StartGate
        let startup: TimedStages
    }
    private let listening = NIOLockedValueBox<Listening?>(nil)

    /// Serves the socket: from here on clients are greeted, and the gate holds their requests
    /// until READY=1. Called before the service group runs (issue 29, the cold start: the
    /// group's set-up, its signal handlers and tasks, ~0.4 ms, comes after the first
    /// greetings rather than before), else by `run`.
    func serveSocket() async throws {
        var startup = self.startup
        let gate = StartGate(closed: true)
        let (channel, context) = try await bind(startGate: gate)
        startup.finished("socket")
        listening.withLockedValue { $0 = Listening(channel: channel, context: context, gate: gate, startup: startup) }
    }

    func run() async throws {
        let servedBefore = listening.withLockedValue({ $0 }) != nil
        if !servedBefore { try await serveSocket() }
        guard let served = listening.withLockedValue({ $0 }) else { return }
        let (serverChannel, context, gate) = (served.channel, served.context, served.gate)
        var startup = served.startup
        // The service group's set-up, since the socket was served.
        if servedBefore { startup.finished("service group") }
        // Under systemd, libsystemd (opened at its first use, csystemd.c) is opened now, beside
        // the first greetings, and before READY=1 needs it.
        let managed = notifier.enabled || JournalStream.isStandardError()
        if managed { Task.detached(priority: .high) { _ = csystemd_load() } }
        do {
            try await opening?(&startup)
            if managed, let missing = csystemd_error().map({ String(cString: $0) }) {
                throw DaemonError.startup("\(missing); libsystemd0 is one of signupd's dependencies: apt install --reinstall libsystemd0")
            }
        } catch {
            // Nothing was handled. The gate tells every client greeted meanwhile that the
            // start failed, and closes its connection without waiting for it to read;
            // accepts in flight are admitted first (`stopAccepting`) and told as well. The
            // caller logs why.
            await stopAccepting(serverChannel)
            gate.fail()
            try? await serverChannel.close()
            await closeConnections()
            removeSocketFile()
            throw error
        }
        // Sign-up paused by an operator (issue 26): known before the first session opens.
        await services.signupPause.refresh()
        services.tellSessionsOfPauses()
        startup.finished("signup pause")
        // Handover (issue 16): what the previous process left, restored before READY=1.
        if let handover {
            await restore(from: handover, context: context)
            startup.finished("handover")
        }
        let loop = group.next()
        let metrics = await serveMetrics()
        // Every host sharing a PostgreSQL store hears of a pause within a second.
        let pausePolling = services.accounts.store is PostgresAccountStore ? services.signupPause.startPolling(on: loop) : nil
        let lastStatus = NIOLockedValueBox(statusLine())
        gate.open()
        notifier.ready(status: lastStatus.withLockedValue { $0 })
        startup.finished("ready")
        let library = services.forms.library
        logger.info("serving", metadata: [
            "socket": "\(socketDescription)", "pid": "\(getpid())", "startup": "\(startup.description)", "eventLoops": "\(eventLoops)",
            "forms": "\(library.forms.map(\.name).joined(separator: ","))", "locales": "\(library.catalogues.locales.joined(separator: ","))",
        ])
        // Every series at zero, made once the first client is served (issue 29, the cold
        // start: 0.8 ms of about a hundred series); one an event counted already is kept.
        services.metrics.prepare(forms: services.forms.library.forms.map { ($0.name, $0.action) })
        // libphonenumber, opened beside the first requests rather than before them (a number
        // typed meanwhile waits for it), and not earlier: opened beside the stages it made
        // the first `hello` 2.5 ms later (BENCHMARKS.md). One that cannot be used is logged,
        // critical, by this first `load` (PhoneLibrary); a trial that did not happen is tried
        // again.
        PhoneLibrary.warmUp()
        // ICU likewise (it is opened at first use, cicu.c): in the background, so the first
        // name checked does not pay for it.
        Task.detached(priority: .utility) { [logger] in
            if let why = Usernames.openICU() {
                logger.critical("usernames cannot be checked: \(why); every name is refused as unavailable (reinstall the ICU package signupd depends on)")
            }
        }

        let memory = MemoryReturn(logger: logger)
        // Once a second: refresh STATUS= when it changed, check for idle exit, and give memory
        // back once a flood has passed.
        let housekeeping = loop.scheduleRepeatedTask(initialDelay: .seconds(1), delay: .seconds(1)) { [self] _ in
            let current = statusLine()
            if lastStatus.withLockedValue({ status in defer { status = current }; return status != current }) {
                notifier.status(current)
            }
            if let idleExit = configuration.idleExitSeconds, let idle = services.registry.idleFor, idle >= .seconds(Int64(idleExit)) {
                stop.fire(.idle)
            }
            // Summaries of repeated log lines whose minute is over.
            services.reporting.log.flush()
            memory.tick(load: { [services] in services.registry.connectionCount + services.directory.count },
                        highest: { services.registry.takeMostConnectionsSinceLook() + services.directory.takeMostSinceLook() })
        }
        // Expired tokens are deleted soon after start, then hourly.
        let pruning = loop.scheduleRepeatedTask(initialDelay: .seconds(5), delay: .hours(1)) { [services] _ in
            services.accounts.pruneExpiredTokens(on: loop)
        }
        // The watchdog is fed from an event loop, so a stuck loop stops feeding it.
        let watchdog = notifier.watchdogInterval.map { interval in
            // At most a hundred pings a second, whatever WATCHDOG_USEC says (helper-44: 1 µs
            // made a busy loop of them).
            let half = TimeAmount.nanoseconds(max(interval.nanoseconds / 2, 10_000_000))
            return loop.scheduleRepeatedTask(initialDelay: .zero, delay: half) { [notifier] _ in notifier.watchdog() }
        }

        let reason = await withGracefulShutdownHandler {
            await stop.wait()
        } onGracefulShutdown: { [stop] in
            stop.fire(.shutdown)
        }
        logger.info("stopping", metadata: ["reason": "\(reason)"])
        // What the summaries left out so far is said before the process goes.
        services.reporting.log.flush(all: true)
        pausePolling?.cancel()
        await metrics?.close(configuration.metricsListeners)
        let drain = ShutdownDrain(registry: services.registry, grace: .seconds(Int64(configuration.shutdownGraceSeconds)))
        // Handover (issue 16): a restart carries everything to the next process instead.
        if reason == .handover, let handover {
            notifier.stopping(status: "handing over \(services.directory.count) sessions and \(services.registry.connectionCount) connections")
            await stopAccepting(serverChannel)
            try? await serverChannel.close()
            let carried = await handover.handOver(services: services, drain: drain, loop: loop)
            await closeConnections()
            logger.notice(
                "handed over to the next process",
                metadata: ["sessions": "\(carried.sessions)", "connections": "\(carried.connections)", "took": "\(carried.stages.description)"])
            handedOverBox.withLockedValue { $0 = true }
            housekeeping.cancel()
            pruning.cancel()
            watchdog?.cancel()
            return
        }
        notifier.stopping(status: "stopping (\(reason)): finishing \(services.registry.connectionCount) connections")
        // No connection is taken once the drain has begun: one accepted in between was refused
        // `shutdown` at its admission (CI, the boot test's upgrade: 1 of 164 pings), where
        // under systemd it would have waited in the socket's queue for the next process.
        await stopAccepting(serverChannel)
        try? await serverChannel.close()
        removeSocketFile()
        // Signups and logins a connected client waits for are finished within the grace
        // period (sigterm_under_load.py); jobs of clients that went away never start.
        let draining = drain.begin(on: loop)

        // In-flight signups and logins finish and are answered, within the grace period.
        await draining.finish(reason: reason == .idle ? "idle" : "shutdown")
        housekeeping.cancel()
        pruning.cancel()
        watchdog?.cancel()
        logger.info("stopped", metadata: ["signups": "\(services.accounts.counts.signups)", "logins": "\(services.accounts.counts.logins)"])
    }

    /// Stops taking connections from the socket's queue (they wait there for the next
    /// process) and lets each one taken already reach its loop and be admitted. Closing the
    /// server channel at once dropped those: NIO sets up an accepted connection on its loop,
    /// comes back to the server's loop, and closes it there if the server channel has closed
    /// meanwhile, so its client saw the end before `hello` (helper-36: 2 in 6,600 short
    /// connections across 40 restarts; CI, stop 40: 1 of 163 pings).
    private func stopAccepting(_ serverChannel: Channel) async {
        try? await serverChannel.setOption(ChannelOptions.autoRead, value: false).get()
        // An accept under way is three steps: set up on its loop, handed back to the
        // server's loop, registered and admitted on its loop. Each round runs every loop's
        // queue past the step posted before it.
        for _ in 0..<3 {
            for loop in group.makeIterator() { try? await loop.submit {}.get() }
        }
    }

    /// Closes every connection still open (after a handover: those not carried) and waits
    /// until what their closing asks of other loops (a view leaving its session) has run,
    /// while every loop still runs. Left to the loops' shutdown, a connection closed on a
    /// loop still running asked it of a loop already stopped: 87 "Cannot schedule tasks on an
    /// EventLoop that has already shut down" in one restart under a views attack (helper-22),
    /// which NIO says will become a crash.
    private func closeConnections() async {
        let outputs = services.registry.allConnections
        for output in outputs { output.channel.close(promise: nil) }
        for output in outputs { try? await output.channel.closeFuture.get() }
        // Twice round every loop: the closes' work posted elsewhere, then what that posted.
        for _ in 0..<2 {
            for loop in group.makeIterator() { try? await loop.submit {}.get() }
        }
    }

    /// Handover (issue 16): takes over the previous process's sessions and connections.
    private func restore(from handover: HandoverCoordinator, context: ConnectionHandler.Context) async {
        var stages = TimedStages()
        switch await handover.restore(context: context, group: group, stages: &stages) {
        case .nothing:
            break
        case .carried(let sessions, let connections, let endedByClients):
            let took = stages.total
            services.metrics.carried(sessions: sessions, seconds: Double(took.components.seconds) + Double(took.components.attoseconds) / 1e18)
            var metadata: Logger.Metadata = ["sessions": "\(sessions)", "connections": "\(connections)", "took": "\(stages.description)"]
            // Handed over, then closed by their clients before this process took them:
            // counted, so that the two lines add up.
            if endedByClients > 0 { metadata["endedByClients"] = "\(endedByClients)" }
            logger.notice("carried on from the previous process", metadata: metadata)
        case .closed(let connections, let reason):
            logger.notice("closed the previous process's connections", metadata: ["connections": "\(connections)", "reason": "\(reason)"])
        }
    }

    /// Binds the metrics endpoints (`--metrics-socket`, `--metrics-listen`); one that cannot
    /// be bound is logged, and signupd serves without it.
    private func serveMetrics() async -> MetricsEndpoint? {
        guard !configuration.metricsListeners.isEmpty else { return nil }
        let endpoint = MetricsEndpoint(logger: logger) { [services] openMetrics in
            services.metrics.sample(services.levels)
            let text = services.metrics.exposition()
            return openMetrics ? Exposition.openMetrics(fromPrometheus: text) : text
        }
        for listener in configuration.metricsListeners {
            do {
                try await endpoint.bind(listener, group: group)
            } catch {
                logger.error("cannot serve metrics; serving without them", metadata: ["at": "\(MetricsEndpoint.describe(listener))", "error": "\(error)"])
            }
        }
        return endpoint
    }

    private func statusLine() -> String {
        let counts = services.accounts.counts
        let line = "\(services.registry.connectionCount) connections, \(services.directory.count) sessions, \(counts.signups) signups, \(counts.logins) logins"
        guard let fallback = services.forms.fallback else { return line }
        return "\(line); forms.d/messages.d have \(fallback.errorCount) error\(fallback.errorCount == 1 ? "" : "s"), serving the last configuration that loaded"
    }

    private var socketDescription: String {
        switch configuration.listener {
        case .inherited(let fd, let name): "fd \(fd) (\(name)) from systemd"
        case .path(let path, _): path
        }
    }

    private func bind(startGate: StartGate) async throws -> (Channel, ConnectionHandler.Context) {
        let context = ConnectionHandler.Context(
            services: services,
            tuning: configuration.tuning,
            fairTurns: FairTurnsByLoop(clock: services.clock),
            serverName: "signupd/\(configuration.serverVersion)",
            logger: logger,
            handover: handover,
            trustedBridges: configuration.trustedBridges,
            administrators: configuration.administrators,
            storeDescription: configuration.store.description,
            startGate: startGate
        )
        let outputCap = configuration.limits.maxOutputBytes
        let bootstrap = ServerBootstrap(group: group)
            // A short accept queue: a client connecting behind a flood waits for at most
            // this many connections ahead of it (with 4,096, 7 s on a busy machine,
            // ROBUSTNESS.md); the acceptor takes several per wake-up.
            .serverChannelOption(.backlog, value: Self.listenBacklog)
            .serverChannelOption(.maxMessagesPerRead, value: 16)
            // A connection's options (FirstConnectionWarmUp gives its channel the same).
            .childChannelOption(.allowRemoteHalfClosure, value: true)
            .childChannelOption(.writeBufferWaterMark, value: .init(low: outputCap / 2, high: outputCap))
            // A small kernel send buffer: the daemon counts unread output (and pauses a
            // client's requests) only once the kernel holds no more, so with the default
            // (~200 KB) a client that never reads got a thousand `set`s handled first.
            .childChannelOption(.socketOption(.so_sndbuf), value: ConnectionHandler.kernelSendBufferBytes)
            // One small read per readiness event: a client pipelining thousands of requests
            // is served a few hundred lines at a time between everyone else's I/O, not all
            // at once (ConnectionHandler.drain bounds the turn; the poll is the yield).
            .childChannelOption(.recvAllocator, value: ConnectionHandler.recvAllocator)
            .childChannelOption(.maxMessagesPerRead, value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    // Handover (issue 16): knows which output the client has not been sent.
                    if context.handover != nil { try channel.pipeline.syncOperations.addHandler(UnsentOutputTracker()) }
                    try channel.pipeline.syncOperations.addHandler(ConnectionHandler(context: context))
                }
            }
        switch configuration.listener {
        case .inherited(let fd, _):
            let channel = try await bootstrap.withBoundSocket(fd).get()
            // NIO's listen() used a backlog of 128; systemd's may be longer: ours, as for a bound socket.
            _ = listen(fd, Self.listenBacklog)
            return (channel, context)
        case .path(let path, let mode):
            // Checked at start-up too; again here, for a socket file that appeared since.
            try SocketPath.prepare(path)
            let channel: Channel
            do {
                channel = try await bootstrap.bind(unixDomainSocketPath: path).get()
            } catch {
                throw DaemonError.startup(BindFailure.describe(error, at: path))
            }
            chmod(path, mode_t(mode))
            return (channel, context)
        }
    }

    /// Connections accepted by the kernel but not yet by the daemon.
    static let listenBacklog: Int32 = 64

    private func removeSocketFile() {
        if case .path(let path, _) = configuration.listener { unlink(path) }
    }
}
