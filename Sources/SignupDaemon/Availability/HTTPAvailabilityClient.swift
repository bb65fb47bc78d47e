import FormEngine
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix

/// The seed's GitHub check, made configurable: GET the template URL for the name;
/// 404 means available, any 2xx taken, anything else (or no answer in time) unreachable.
///
/// Connections are kept alive and reused, at most `maxConnections` open at once for the
/// whole daemon, and at most `maxConnectionsPerUID` carrying one uid's checks: one user's
/// checks against a slow service leave the other half to everyone else. A check waits for
/// a free one (within its timeout); a freed connection goes to the waiting check of the uid
/// using the fewest, the earliest first. A cancelled check
/// closes its connection, aborting the request (or leaves the wait). For `https://` each
/// connection does its TLS handshake (certificate verified for the URL's host) before it
/// carries a request; a failed one is one more way of not answering.
///
/// The pool's rules are `AvailabilityPoolState`: every event is told to it under the lock,
/// and the actions it returns are run here after the lock is left.
///
/// The service going unreachable is logged once, with the reason, and its coming back once.
final class HTTPAvailabilityClient: Sendable {
    typealias Pool = AvailabilityPoolState<any Channel, PendingCheck, Scheduled<Void>>

    let template: AvailabilityURLTemplate
    let timeout: Duration
    let maxConnections: Int
    let maxConnectionsPerUID: Int
    /// How long a kept-alive connection may wait unused before it is closed.
    let idleTimeout: TimeAmount
    private let tls: AvailabilityTLS?
    let logger: Logger
    let health = NIOLockedValueBox(AvailabilityServiceHealth())
    /// How long checks answer "Error contacting server" without connecting, after a
    /// connection to the service failed (refused, unreachable): a dead service costs one
    /// attempt a second, not one per keystroke, like the store's circuit breaker.
    static let failFastPeriod = TimeAmount.seconds(1)

    /// A check in the pool: what its request asks, and where its outcome goes.
    struct PendingCheck: AvailabilityPoolCheck {
        let id: UInt64
        let peer: PeerKey
        /// The request's path for the name.
        let target: String
        let cancellation: CheckCancellation
        let promise: EventLoopPromise<Outcome>
    }

    private let pool: NIOLockedValueBox<Pool>
    private let group: EventLoopGroup

    /// `tls` is required for an `https://` template.
    init(
        template: AvailabilityURLTemplate, timeout: Duration, maxConnections: Int = 16, idleTimeout: TimeAmount = .seconds(30),
        tls: AvailabilityTLS? = nil, group: EventLoopGroup, logger: Logger = Logger(label: "signupd.availability")
    ) {
        precondition(template.isHTTPS == (tls != nil), "an https:// availability URL needs its TLS configuration")
        self.template = template
        self.timeout = timeout
        self.maxConnections = maxConnections
        maxConnectionsPerUID = max(1, maxConnections / 2)
        self.idleTimeout = idleTimeout
        self.tls = tls
        self.group = group
        self.logger = logger
        pool = NIOLockedValueBox(Pool(maxConnections: maxConnections, maxConnectionsPerUID: maxConnectionsPerUID, failFastPeriod: Self.failFastPeriod))
    }

    /// Connections open now (for tests and logs).
    var openConnections: Int { pool.withLockedValue { $0.openConnections } }

    /// Asks the service about a name: `username` in NFC as typed, `key` its identity key
    /// (`AvailabilityURLTemplate`).
    func check(username: String, key: String, peer: PeerKey, cancellation: CheckCancellation, on eventLoop: EventLoop) -> EventLoopFuture<Availability> {
        // Stopping: the loops may be shutting down; nothing is scheduled on them any more.
        // Failing fast: already logged as unreachable.
        guard case .admitted(let id) = pool.withLockedValue({ $0.admit(now: .now()) }) else {
            return eventLoop.makeSucceededFuture(.unreachable)
        }
        let promise = eventLoop.makePromise(of: Outcome.self)
        // Its time ran out at the service, or waiting for a connection (congestion here, not
        // the service's failure): the pool tells which.
        let deadline = eventLoop.scheduleTask(in: .nanoseconds(timeout.nanoseconds)) { [self] in
            run(pool.withLockedValue { $0.deadlinePassed(id) })
        }
        let check = PendingCheck(id: id, peer: peer, target: template.target(username: username, key: key), cancellation: cancellation, promise: promise)
        let actions = pool.withLockedValue { $0.lease(check, isActive: { $0.isActive }) }
        // Cancelled while waiting: it leaves the queue. Once it is sent, the abort replaces this.
        cancellation.onCancel { [self] in run(pool.withLockedValue { $0.cancelWaiting(id) }) }
        run(actions)
        return promise.futureResult.map { [self] outcome in
            deadline.cancel()
            return availability(of: outcome, cancellation: cancellation)
        }
    }

    /// Closes every connection and ends the checks waiting for one, before the event loops
    /// stop: nothing of the client's is left to run on a loop that has shut down.
    func shutdown() async {
        for action in pool.withLockedValue({ $0.shutdown() }) {
            if case .close(let channel) = action {
                try? await channel.close().get()
            } else {
                run([action])
            }
        }
    }

    /// Performs what the pool asked for, after its lock is left. `handshake`: the TLS
    /// handshake of the connection just made, for `awaitHandshake`.
    private func run(_ actions: [Pool.Action], handshake: EventLoopPromise<Void>? = nil) {
        for action in actions {
            switch action {
            case .connect(let id):
                connect(id)
            case .awaitHandshake(let id, let channel):
                if let handshake { awaitHandshake(id, on: channel, handshake) }
            case .send(let check, let id, let channel):
                send(check, connection: id, on: channel)
            case .fail(let check, let failure):
                check.promise.succeed(.failed(failure))
            case .close(let channel):
                channel.close(promise: nil)
            case .scheduleIdleTimer(let key, let channel):
                let timer = channel.eventLoop.scheduleTask(in: idleTimeout) { [self] in
                    run(pool.withLockedValue { $0.idleTimerFired(key) })
                }
                run(pool.withLockedValue { $0.idleTimerScheduled(key, timer) })
            case .cancelTimer(let timer):
                timer.cancel()
            }
        }
    }

    private func connect(_ id: Pool.ConnectionID) {
        let host = template.host
        // The handshake's outcome is kept from before the channel exists: a handshake that
        // fails at once may have closed the channel, and emptied its pipeline, before the
        // connect's callback runs — its reason must not be lost with the pipeline.
        let loop = group.next()
        let handshake: EventLoopPromise<Void>? = tls == nil ? nil : loop.makePromise()
        ClientBootstrap(group: loop)
            .connectTimeout(.nanoseconds(timeout.nanoseconds))
            .channelInitializer { [tls] channel in
                channel.eventLoop.makeCompletedFuture {
                    let operations = channel.pipeline.syncOperations
                    if let tls, let handshake {
                        try operations.addHandler(try tls.handler(host: host))
                        try operations.addHandler(TLSGate(host: host, promise: handshake))
                    }
                    try operations.addHTTPClientHandlers()
                    try operations.addHandler(ResponseHandler(https: tls != nil))
                }
            }
            .connect(host: template.host, port: template.port)
            .whenComplete { [self] result in
                switch result {
                case .success(let channel):
                    let actions = pool.withLockedValue { $0.connected(id, channel, handshake: handshake != nil) }
                    channel.closeFuture.whenComplete { [self] _ in run(pool.withLockedValue { $0.closed(id) }) }
                    run(actions, handshake: handshake)
                case .failure(let error):
                    handshake?.fail(error)  // never started: nobody waits for it
                    let cause = AvailabilityFailure.describe(error)
                    run(pool.withLockedValue { $0.connectFailed(id, cause: cause, now: .now()) })
                }
            }
    }

    /// Ready once the handshake is done and the certificate names the host.
    private func awaitHandshake(_ id: Pool.ConnectionID, on channel: Channel, _ handshake: EventLoopPromise<Void>) {
        let expiry = channel.eventLoop.scheduleTask(in: .nanoseconds(timeout.nanoseconds)) { [timeoutText] in
            // A gate that is gone has settled the handshake already.
            (try? channel.pipeline.syncOperations.handler(type: TLSGate.self))?.fail(AvailabilityFailure.HandshakeTimeout(seconds: timeoutText))
            channel.close(promise: nil)
        }
        handshake.futureResult.whenComplete { [self] result in
            expiry.cancel()
            switch result {
            case .success: run(pool.withLockedValue { $0.handshakeSucceeded(id) })
            case .failure(let error):
                let cause = AvailabilityFailure.describe(error)
                run(pool.withLockedValue { $0.handshakeFailed(id, cause: cause) })
            }
        }
    }

    /// Sends the check's request on a connection lent to it; once the check has its outcome,
    /// the connection goes back to the pool.
    private func send(_ check: PendingCheck, connection id: Pool.ConnectionID, on channel: Channel) {
        let promise = check.promise
        let cancellation = check.cancellation
        let exchange = Exchange(promise: promise)
        // Abort: closing the connection ends the request; the pool forgets it. A check
        // the session gave up on (its timeout) failed for want of an answer.
        cancellation.onCancel {
            if cancellation.timedOut { promise.succeed(.failed(.noAnswer)) }
            channel.close(promise: nil)
        }
        promise.futureResult.whenComplete { [self] _ in
            cancellation.clear()
            pool.withLockedValue { $0.checkFinished(check.id) }
            // An answered request leaves a reusable connection; anything else closes it.
            channel.eventLoop.execute { [self] in
                let reusable = exchange.reusable && channel.isActive
                run(pool.withLockedValue { $0.connectionFreed(id, reusable: reusable) })
            }
        }
        channel.eventLoop.execute { [self] in
            guard let handler = try? channel.pipeline.syncOperations.handler(type: ResponseHandler.self) else {
                return promise.succeed(.failed(.service("the service closed the connection")))
            }
            guard channel.isActive else { return promise.succeed(.failed(.service(handler.closedBecause ?? "the service closed the connection"))) }
            handler.begin(exchange)
            channel.write(HTTPClientRequestPart.head(Self.requestHead(target: check.target, hostHeader: template.hostHeader)), promise: nil)
            channel.writeAndFlush(HTTPClientRequestPart.end(nil), promise: nil)
        }
    }
}
