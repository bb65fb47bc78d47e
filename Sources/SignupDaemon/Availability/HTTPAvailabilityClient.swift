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
/// The service going unreachable is logged once, with the reason, and its coming back once.
final class HTTPAvailabilityClient: Sendable {
    let template: AvailabilityURLTemplate
    let timeout: Duration
    let maxConnections: Int
    let maxConnectionsPerUID: Int
    /// How long a kept-alive connection may wait unused before it is closed.
    let idleTimeout: TimeAmount
    private let tls: AvailabilityTLS?
    let logger: Logger
    let health = NIOLockedValueBox(AvailabilityServiceHealth())
    /// Until when checks answer "Error contacting server" without connecting, after a
    /// connection to the service failed (refused, unreachable): a dead service costs one
    /// attempt a second, not one per keystroke, like the store's circuit breaker.
    private let failFastUntil = NIOLockedValueBox<NIODeadline?>(nil)
    static let failFastPeriod = TimeAmount.seconds(1)
    /// The cause of a check ended by the daemon stopping: not the service's failure.
    static let stopping = "signupd is stopping"

    /// What the pool gives a check: a connection ready for a request, or why there is none.
    private enum Lease {
        case ready(Channel)
        case failed(String)
    }

    private struct Waiter {
        let id: UInt64
        let uid: UInt32
        /// Set when a connection is given to it (connecting or ready).
        let lent: NIOLockedValueBox<Bool>
        let start: @Sendable (Lease) -> Void
    }

    /// A kept-alive connection waiting for the next check, closed when it has waited
    /// `idleTimeout` (the service or a middlebox may have dropped it silently meanwhile).
    private struct Idle {
        let channel: Channel
        let expiry: Scheduled<Void>
    }

    private struct Pool {
        var open = 0
        var idle: [Idle] = []
        var waiters: [Waiter] = []
        var nextWaiter: UInt64 = 0
        /// Connections given to each uid's checks (connecting or carrying a request).
        var inUse: [UInt32: Int] = [:]
        /// Every connected channel, idle or carrying a request (closed at shutdown).
        var channels: [ObjectIdentifier: Channel] = [:]
        /// The daemon is stopping: no new connection, no new check.
        var stopped = false

        mutating func lend(to uid: UInt32) { inUse[uid, default: 0] += 1 }

        mutating func giveBack(from uid: UInt32) {
            guard let count = inUse[uid] else { return }
            inUse[uid] = count > 1 ? count - 1 : nil
        }

        /// The waiting check a freed connection goes to: of the uids below `perUID`, the
        /// one using the fewest, its earliest check; lent to it.
        mutating func nextWaiter(perUID: Int) -> Waiter? {
            var best: (index: Int, using: Int)?
            for (index, waiter) in waiters.enumerated() {
                let using = inUse[waiter.uid, default: 0]
                guard using < perUID, using < (best?.using ?? Int.max) else { continue }
                best = (index, using)
                if using == 0 { break }
            }
            guard let best else { return nil }
            let waiter = waiters.remove(at: best.index)
            lend(to: waiter.uid)
            waiter.lent.withLockedValue { $0 = true }
            return waiter
        }
    }

    private let pool = NIOLockedValueBox(Pool())
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
    }

    /// Connections open now (for tests and logs).
    var openConnections: Int { pool.withLockedValue { $0.open } }

    /// Asks the service about a name: `username` in NFC as typed, `key` its identity key
    /// (`AvailabilityURLTemplate`).
    func check(username: String, key: String, uid: UInt32, cancellation: CheckCancellation, on eventLoop: EventLoop) -> EventLoopFuture<Availability> {
        // Stopping: the loops may be shutting down; nothing is scheduled on them any more.
        guard !pool.withLockedValue({ $0.stopped }) else { return eventLoop.makeSucceededFuture(.unreachable) }
        if let until = failFastUntil.withLockedValue({ $0 }), NIODeadline.now() < until {
            return eventLoop.makeSucceededFuture(.unreachable)  // already logged as unreachable
        }
        let promise = eventLoop.makePromise(of: Outcome.self)
        // Whether a connection was given to this check: its time ran out at the service, or
        // waiting for a connection (congestion here, not the service's failure).
        let lent = NIOLockedValueBox(false)
        let deadline = eventLoop.scheduleTask(in: .nanoseconds(timeout.nanoseconds)) { [self, timeoutText] in
            promise.succeed(.failed(lent.withLockedValue { $0 } ? "no answer within \(timeoutText) s" : busy))
        }
        let target = template.target(username: username, key: key)
        acquire(uid: uid, lent: lent, cancellation: cancellation, promise: promise) { [self] lease in
            let channel: Channel
            switch lease {
            case .failed(let cause):
                // Only a lent connection is given back (a waiter ended by the shutdown was none).
                if lent.withLockedValue({ $0 }) { pool.withLockedValue { $0.giveBack(from: uid) } }
                return promise.succeed(.failed(cause))
            case .ready(let ready): channel = ready
            }
            let exchange = Exchange(promise: promise)
            // Abort: closing the connection ends the request; the pool forgets it. A check
            // the session gave up on (its timeout) failed for want of an answer.
            cancellation.onCancel { [timeoutText] in
                if cancellation.timedOut { promise.succeed(.failed("no answer within \(timeoutText) s")) }
                channel.close(promise: nil)
            }
            promise.futureResult.whenComplete { [self] _ in
                cancellation.clear()
                // The uid's share first: its own waiting check may take the connection next.
                pool.withLockedValue { $0.giveBack(from: uid) }
                // An answered request leaves a reusable connection; anything else closes it.
                channel.eventLoop.execute { [self] in
                    if exchange.reusable, channel.isActive { release(channel) } else { channel.close(promise: nil) }
                }
            }
            channel.eventLoop.execute { [self] in
                guard let handler = try? channel.pipeline.syncOperations.handler(type: ResponseHandler.self) else {
                    return promise.succeed(.failed("the service closed the connection"))
                }
                guard channel.isActive else { return promise.succeed(.failed(handler.closedBecause ?? "the service closed the connection")) }
                handler.begin(exchange)
                channel.write(HTTPClientRequestPart.head(Self.requestHead(target: target, hostHeader: template.hostHeader)), promise: nil)
                channel.writeAndFlush(HTTPClientRequestPart.end(nil), promise: nil)
            }
        }
        return promise.futureResult.map { [self] outcome in
            deadline.cancel()
            switch outcome {
            case .answered(let availability):
                report(health.withLockedValue { $0.answered(at: .now()) })
                return availability
            case .failed(let cause):
                // A superseded check did not fail: it was no longer wanted. One the session
                // gave up waiting for did (the session's timeout and this one are the same).
                // Waiting for a connection is congestion here: the service is not to blame.
                if (!cancellation.isCancelled || cancellation.timedOut) && cause != Self.stopping && cause != busy {
                    report(health.withLockedValue { $0.failed(cause, at: .now()) })
                }
                return .unreachable
            }
        }
    }

    /// Why a check that waited its whole timeout for a connection failed.
    private var busy: String { "all \(maxConnections) connections to the service busy" }

    /// Gives `start` an idle connection, a new one within the caps, or queues it.
    private func acquire(
        uid: UInt32, lent: NIOLockedValueBox<Bool>, cancellation: CheckCancellation, promise: EventLoopPromise<Outcome>, start: @escaping @Sendable (Lease) -> Void
    ) {
        enum Next { case reuse(Channel), connect, wait(UInt64), stopped }
        let next: Next = pool.withLockedValue { [maxConnectionsPerUID] pool in
            if pool.stopped { return .stopped }
            if pool.inUse[uid, default: 0] < maxConnectionsPerUID {
                while let idle = pool.idle.popLast() {
                    idle.expiry.cancel()
                    if idle.channel.isActive {
                        pool.lend(to: uid)
                        lent.withLockedValue { $0 = true }
                        return .reuse(idle.channel)
                    }
                }
                if pool.open < maxConnections {
                    pool.open += 1
                    pool.lend(to: uid)
                    lent.withLockedValue { $0 = true }
                    return .connect
                }
            }
            pool.nextWaiter += 1
            pool.waiters.append(Waiter(id: pool.nextWaiter, uid: uid, lent: lent, start: start))
            return .wait(pool.nextWaiter)
        }
        switch next {
        case .reuse(let channel): start(.ready(channel))
        case .stopped: start(.failed(Self.stopping))
        case .connect: connect(start)
        case .wait(let id):
            // Leaving the queue: cancelled, or timed out.
            let leave: @Sendable () -> Void = { [self] in
                let removed = pool.withLockedValue { pool in
                    let before = pool.waiters.count
                    pool.waiters.removeAll { $0.id == id }
                    return pool.waiters.count < before
                }
                if removed { promise.succeed(.failed(busy)) }
            }
            cancellation.onCancel(leave)
            promise.futureResult.whenComplete { _ in leave() }
        }
    }

    private func connect(_ start: @escaping @Sendable (Lease) -> Void) {
        let host = template.host
        let handshakeTimeout = TimeAmount.nanoseconds(timeout.nanoseconds)
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
            .whenComplete { [self, timeoutText] result in
                switch result {
                case .success(let channel):
                    failFastUntil.withLockedValue { $0 = nil }
                    let stopped = pool.withLockedValue { pool in
                        if !pool.stopped { pool.channels[ObjectIdentifier(channel)] = channel }
                        return pool.stopped
                    }
                    channel.closeFuture.whenComplete { [self] _ in connectionClosed(channel) }
                    if stopped {
                        channel.close(promise: nil)
                        return start(.failed(Self.stopping))
                    }
                    guard let handshake else { return start(.ready(channel)) }
                    // Ready once the handshake is done and the certificate names the host.
                    let expiry = channel.eventLoop.scheduleTask(in: handshakeTimeout) {
                        // A gate that is gone has settled the handshake already.
                        (try? channel.pipeline.syncOperations.handler(type: TLSGate.self))?.fail(AvailabilityFailure.HandshakeTimeout(seconds: timeoutText))
                        channel.close(promise: nil)
                    }
                    handshake.futureResult.whenComplete { result in
                        expiry.cancel()
                        switch result {
                        case .success: start(.ready(channel))
                        case .failure(let error):
                            channel.close(promise: nil)
                            start(.failed(AvailabilityFailure.describe(error)))
                        }
                    }
                case .failure(let error):
                    handshake?.fail(error)  // never started: nobody waits for it
                    failFastUntil.withLockedValue { $0 = .now() + Self.failFastPeriod }
                    connectionClosed(nil)
                    start(.failed(AvailabilityFailure.describe(error)))
                }
            }
    }

    /// Closes every connection and ends the checks waiting for one, before the event loops
    /// stop: nothing of the client's is left to run on a loop that has shut down.
    func shutdown() async {
        let (channels, waiters) = pool.withLockedValue { pool in
            pool.stopped = true
            for idle in pool.idle { idle.expiry.cancel() }
            pool.idle = []
            defer { pool.waiters = [] }
            return (Array(pool.channels.values), pool.waiters)
        }
        for waiter in waiters { waiter.start(.failed(Self.stopping)) }
        for channel in channels { try? await channel.close().get() }
    }

    /// Back to the pool, or straight to a waiting check.
    private func release(_ channel: Channel) {
        let waiter: Waiter? = pool.withLockedValue { [maxConnectionsPerUID] pool -> Waiter? in
            if pool.stopped {
                channel.close(promise: nil)
                return nil
            }
            guard let waiter = pool.nextWaiter(perUID: maxConnectionsPerUID) else {
                let expiry = channel.eventLoop.scheduleTask(in: idleTimeout) { [self] in
                    // Taken out of the pool first: no check can pick it up while it closes.
                    let expired = self.pool.withLockedValue { pool in
                        guard let index = pool.idle.firstIndex(where: { $0.channel === channel }) else { return false }
                        pool.idle.remove(at: index)
                        return true
                    }
                    if expired { channel.close(promise: nil) }
                }
                pool.idle.append(Idle(channel: channel, expiry: expiry))
                return nil
            }
            return waiter
        }
        waiter?.start(.ready(channel))
    }

    /// A connection (or an attempt, nil) ended: its slot goes to a waiting check.
    private func connectionClosed(_ channel: Channel?) {
        let waiter: Waiter? = pool.withLockedValue { [maxConnectionsPerUID] pool in
            if let channel {
                pool.channels[ObjectIdentifier(channel)] = nil
                pool.idle.removeAll { idle in
                    guard idle.channel === channel else { return false }
                    idle.expiry.cancel()
                    return true
                }
            }
            guard !pool.stopped, let waiter = pool.nextWaiter(perUID: maxConnectionsPerUID) else {
                pool.open -= 1
                return nil
            }
            return waiter  // the slot passes on: `open` stays
        }
        if let waiter { connect(waiter.start) }
    }

}
