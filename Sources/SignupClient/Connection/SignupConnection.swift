import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import SignupProtocol

#if canImport(Glibc)
import Glibc
#endif

/// An async connection to signupd over its Unix socket.
///
/// Requests are matched to their replies by id; everything else signupd sends (session
/// events of forms held here, `closed`, `bye`, events a newer daemon added) comes through
/// ``events()``. The connection's end is a typed outcome (``end``), and a reply that can no
/// longer come fails with ``SignupClientError/ended(_:)``.
///
/// ```swift
/// let connection = try await SignupConnection.connect()
/// let opened = try await connection.open(form: "signup")
/// try await connection.set("username", to: "alice")
/// try await connection.ping()  // everything sent so far has been handled
/// ```
public final class SignupConnection: Sendable {
    /// Bounds and threads.
    public struct Configuration: Sendable {
        /// Events buffered for each ``events()`` reader. A reader that falls this far behind
        /// ends the connection (``SignupClientError/eventBufferFull(limit:)``) rather than
        /// lose an event or grow without bound; signupd treats a slow reader the same way.
        public var eventBufferLimit: Int
        /// The longest line taken from signupd.
        public var maxLineBytes: Int
        /// Where the socket's I/O runs.
        public var eventLoopGroup: any EventLoopGroup
        /// How long a ``SignupForm`` keeps trying to resume its session after its connection
        /// dropped: signupd's `--resume-grace` (60 s by default).
        public var resumeGrace: Duration
        /// For a trusted front end (a web bridge, an app back end): the person every
        /// connection speaks for, named with `client` right after the greeting, a reconnection's
        /// too (`resume` takes a session back only for the same client).
        public var speaksFor: FrontEndClient?

        /// The defaults: 4,096 events per reader, lines up to 16 MiB, NIO's shared event
        /// loops, and signupd's default grace of 60 s.
        public init(
            eventBufferLimit: Int = 4096, maxLineBytes: Int = 16 << 20, eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
            resumeGrace: Duration = .seconds(60), speaksFor: FrontEndClient? = nil
        ) {
            self.eventBufferLimit = eventBufferLimit
            self.maxLineBytes = maxLineBytes
            self.eventLoopGroup = eventLoopGroup
            self.resumeGrace = resumeGrace
            self.speaksFor = speaksFor
        }
    }

    /// The end client a front end's connection speaks for (PROTOCOL.md, "Front ends
    /// speaking for their people").
    public struct FrontEndClient: Sendable, Equatable {
        /// Opaque, at most 256 bytes: a browser's flow cookie, an app's device id.
        public var id: String
        /// The person's IP address as the front end saw it, if it knows it.
        public var address: String?

        public init(id: String, address: String? = nil) {
            self.id = id
            self.address = address
        }
    }

    /// The socket path connected to.
    public let path: String
    /// What signupd said of itself in its greeting.
    public let info: ServerInfo
    let configuration: Configuration
    private let channel: any Channel
    private let core: NIOLockedValueBox<ConnectionCore>

    private init(path: String, info: ServerInfo, configuration: Configuration, channel: any Channel, core: NIOLockedValueBox<ConnectionCore>) {
        self.path = path
        self.info = info
        self.configuration = configuration
        self.channel = channel
        self.core = core
    }

    /// Connects to signupd at `path` (by default where signupctl looks: ``SocketPath/default``)
    /// and reads its greeting.
    public static func connect(to path: String = SocketPath.default, configuration: Configuration = Configuration()) async throws(SignupClientError) -> SignupConnection {
        let core = NIOLockedValueBox(ConnectionCore(eventBufferLimit: configuration.eventBufferLimit))
        let channel: any Channel
        do {
            channel = try await ClientBootstrap(group: configuration.eventLoopGroup)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        let handler = LineHandler(
                            maxLineBytes: configuration.maxLineBytes,
                            received: { message in Self.run(core.withLockedValue { $0.received(message) }, core: core, channel: channel) },
                            ended: { failure in Self.run(core.withLockedValue { $0.channelEnded(failure) }, core: core, channel: channel) })
                        try channel.pipeline.syncOperations.addHandler(handler)
                    }
                }
                .connect(unixDomainSocketPath: path)
                .get()
        } catch let error as IOError {
            throw .connectFailed(path: path, errno: error.errnoCode)
        } catch SocketAddressError.unixDomainSocketPathTooLong {
            throw .socketPathTooLong(path: path)
        } catch {
            throw .connectFailed(path: path, errno: EINVAL)
        }
        let greeting = await withCheckedContinuation { waiter in
            if let greeting = core.withLockedValue({ $0.awaitGreeting(waiter) }) { waiter.resume(returning: greeting) }
        }
        do {
            let info = try ServerInfo.greeting(try greeting.get(), path: path)
            let connection = SignupConnection(path: path, info: info, configuration: configuration, channel: channel, core: core)
            if let client = configuration.speaksFor { try await connection.nameClient(client.id, address: client.address) }
            return connection
        } catch {
            channel.close(promise: nil)
            throw error
        }
    }

    /// Connects, then hands the connection to `setup`; if `setup` fails, the connection is
    /// closed before the failure is passed on.
    static func connect<Value>(
        to path: String, configuration: Configuration, _ setup: (SignupConnection) async throws(SignupClientError) -> Value
    ) async throws(SignupClientError) -> Value {
        let connection = try await connect(to: path, configuration: configuration)
        do {
            return try await setup(connection)
        } catch {
            await connection.close()
            throw error
        }
    }

    deinit {
        channel.close(promise: nil)
    }

    // MARK: Requests

    /// Sends `operation` with a fresh id and returns signupd's reply: the first message
    /// carrying the id that is not one of the validations it caused. An `error` reply is
    /// thrown as ``SignupClientError/refused(_:)``. Cancelling the calling task withdraws
    /// the wait (the request itself may still be handled).
    @discardableResult
    public func request(_ operation: Request.Operation) async throws(SignupClientError) -> ServerMessage {
        try await request { id in
            var writer = JSONWriter()
            Request(id: id, operation).encode(into: &writer)
            return writer.bytes
        }
    }

    /// Sends the line `encode` makes for a fresh id and waits for its reply.
    private func request(unknownEvents: Bool = false, _ encode: @escaping @Sendable (RequestID) -> [UInt8]) async throws(SignupClientError) -> ServerMessage {
        let id = core.withLockedValue { $0.makeID() }
        let reply: ConnectionCore.Reply = await withTaskCancellationHandler {
            await withCheckedContinuation { waiter in
                if let end = core.withLockedValue({ $0.register(id, unknownEvents: unknownEvents, waiter) }) {
                    waiter.resume(returning: .failure(.ended(end)))
                    return
                }
                // Cancelled before it was registered: the handler found nothing to withdraw.
                if Task.isCancelled {
                    Self.run(core.withLockedValue { $0.withdraw(id, because: .cancelled) }, core: core, channel: channel)
                    return
                }
                // Registered before it is sent: the reply cannot come first.
                write(encode(id)) { failure in
                    Self.run(self.core.withLockedValue { $0.withdraw(id, because: failure) }, core: self.core, channel: self.channel)
                }
            }
        } onCancel: {
            Self.run(core.withLockedValue { $0.withdraw(id, because: .cancelled) }, core: core, channel: channel)
        }
        return try reply.get()
    }

    /// Sends an operation this library has no case for (one a newer daemon added), given as
    /// its members without `id`, and returns its reply as ``request(_:)`` does — which may
    /// be an event this library cannot read (``SignupProtocol/ServerEvent/unknown(_:)``).
    @discardableResult
    public func request(op: String, _ members: [JSONObject.Member]) async throws(SignupClientError) -> ServerMessage {
        try await request(unknownEvents: true) { id in
            var writer = JSONWriter()
            writer.value(.object(JSONObject([.init(key: "op", value: .string(op))] + members + [.init(key: "id", value: id.json)])))
            writer.endLine()
            return writer.bytes
        }
    }

    /// Sends `operation` without waiting for anything back (a `set`: its validations come
    /// as events). Returns once the bytes are handed to the socket.
    public func send(_ operation: Request.Operation) async throws(SignupClientError) {
        let failure: SignupClientError? = await withCheckedContinuation { done in
            var writer = JSONWriter()
            Request(operation).encode(into: &writer)
            write(writer.bytes, completed: { done.resume(returning: nil) }) { done.resume(returning: $0) }
        }
        if let failure { throw failure }
    }

    /// The ordering barrier: returns once signupd has handled everything sent before it,
    /// and every event it caused has been delivered.
    public func ping() async throws(SignupClientError) {
        try await request(.ping)
    }

    private func write(_ line: [UInt8], completed: (@Sendable () -> Void)? = nil, failed: @escaping @Sendable (SignupClientError) -> Void) {
        let buffer = channel.allocator.buffer(bytes: line)
        channel.writeAndFlush(buffer).whenComplete { outcome in
            switch outcome {
            case .success: completed?()
            case .failure(let error): failed(.sendFailed(errno: (error as? IOError)?.errnoCode ?? EPIPE))
            }
        }
    }

    // MARK: Events

    /// Everything signupd sends that is not a reply to a request, in order, until the
    /// connection ends: session events, `closed`, `bye`, and ``SignupProtocol/ServerEvent/unknown(_:)``
    /// for what a newer daemon added. Each call is a reader of its own, bounded by
    /// ``Configuration/eventBufferLimit``.
    public func events() -> AsyncStream<ServerEvent> {
        reader { $0.event }
    }

    /// The same lines as ``events()``, each with its members as sent: for a relay that
    /// passes signupd's words on (a web bridge), replies to requests sent with
    /// ``send(line:)`` included (this library matches only its own ids).
    public func messages() -> AsyncStream<ServerMessage> {
        reader { $0 }
    }

    private func reader<Element: Sendable>(_ element: @escaping @Sendable (ServerMessage) -> Element) -> AsyncStream<Element> {
        let (stream, continuation) = AsyncStream.makeStream(of: Element.self, bufferingPolicy: .bufferingOldest(configuration.eventBufferLimit))
        let subscriber = ConnectionCore.Subscriber(
            yield: { message in
                if case .dropped = continuation.yield(element(message)) { return false }
                return true
            },
            finish: { continuation.finish() })
        guard let token = core.withLockedValue({ $0.subscribe(subscriber) }) else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [core] _ in core.withLockedValue { $0.unsubscribe(token) } }
        return stream
    }

    /// Sends a request line as given (a relay's: the caller chose its `id`, which must not be
    /// an integer, the ids this library uses); its replies come through ``messages()``.
    /// Returns once the bytes are handed to the socket.
    public func send(line: JSONObject) async throws(SignupClientError) {
        let failure: SignupClientError? = await withCheckedContinuation { done in
            var writer = JSONWriter()
            writer.value(.object(line))
            writer.endLine()
            write(writer.bytes, completed: { done.resume(returning: nil) }) { done.resume(returning: $0) }
        }
        if let failure { throw failure }
    }

    /// Calls `observer` with every line signupd sends, replies included, in order, on the
    /// connection's event loop, before any reply it carries is returned; it must not block.
    /// For view models that need each event applied before the request that caused it
    /// returns (``SignupForm``).
    /// Observers stay until the connection ends.
    func observe(_ observer: @escaping @Sendable (ServerMessage) -> Void) {
        core.withLockedValue { $0.observe(observer) }
    }

    /// How the connection ended; waits until it has.
    public var end: SignupConnectionEnd {
        get async {
            await withCheckedContinuation { waiter in
                if let end = core.withLockedValue({ $0.awaitEnd(waiter) }) { waiter.resume(returning: end) }
            }
        }
    }

    /// Closes the connection: waiting replies fail with ``SignupClientError/ended(_:)``
    /// (``SignupConnectionEnd/closed``), event readers finish. signupd closes the sessions
    /// this connection opened, as PROTOCOL.md says.
    public func close() async {
        shutDown()
        try? await channel.closeFuture.get()
    }

    /// Ends the connection as ``close()`` does, without waiting for the socket to close.
    func shutDown() {
        Self.run(core.withLockedValue { $0.end(.closed) }, core: core, channel: channel)
    }

    /// Drops the socket as a network failure would (the end is ``SignupConnectionEnd/disconnected``):
    /// signupd keeps the sessions it opened for their resume grace. For tests of resuming.
    func drop() {
        channel.close(promise: nil)
    }

    /// Performs what the core decided, outside its lock: observers first, so that a reply
    /// returns only after every line before it, and itself, has been observed.
    private static func run(_ actions: ConnectionCore.Actions, core: NIOLockedValueBox<ConnectionCore>, channel: any Channel) {
        if let delivery = actions.deliver {
            for observer in delivery.observers { observer(delivery.message) }
            var overflow = false
            for subscriber in delivery.subscribers where !subscriber.yield(delivery.message) { overflow = true }
            if overflow { run(core.withLockedValue { $0.overflowed() }, core: core, channel: channel) }
        }
        for (waiter, reply) in actions.replies { waiter.resume(returning: reply) }
        for subscriber in actions.finish { subscriber.finish() }
        if let (end, waiters) = actions.ended { for waiter in waiters { waiter.resume(returning: end) } }
        if actions.closeChannel { channel.close(promise: nil) }
    }
}
