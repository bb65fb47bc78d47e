import SignupProtocol

/// The rules of one async connection as a plain value: who waits for which reply, who
/// reads the events, and how it ends. Every event is a `mutating func` returning what to
/// do; ``SignupConnection`` decides under its lock and acts after it.
struct ConnectionCore {
    typealias Reply = Result<ServerMessage, SignupClientError>
    typealias Waiter = CheckedContinuation<Reply, Never>
    /// A reader of what is not a reply: ``SignupConnection/events()`` or ``SignupConnection/messages()``.
    struct Subscriber: Sendable {
        /// Hands a message on; false when the reader's buffer is full.
        let yield: @Sendable (ServerMessage) -> Bool
        let finish: @Sendable () -> Void
    }
    typealias Observer = @Sendable (ServerMessage) -> Void

    enum Phase {
        /// Before `hello`: the greeting is kept for whoever asks.
        case greeting(waiter: Waiter?)
        /// Greeted: replies and events flow.
        case open
        /// Over, as this says.
        case ended(SignupConnectionEnd)
    }

    /// Events buffered per reader before the connection gives up on it.
    let eventBufferLimit: Int
    private(set) var phase: Phase = .greeting(waiter: nil)
    private var greeting: ServerMessage?
    /// Requests sent and not answered, oldest first; `unknownEvents`: an operation this
    /// library has no case for, whose reply may be an event it cannot read.
    private var pending: [(id: RequestID, unknownEvents: Bool, waiter: Waiter)] = []
    private var subscribers: [Int: Subscriber] = [:]
    private var observers: [Observer] = []
    private var nextToken = 0
    private var nextID: Int64 = 0
    /// Waiting for the connection's end.
    private var endWaiters: [CheckedContinuation<SignupConnectionEnd, Never>] = []

    /// What the connection does after a core event, outside the lock.
    struct Actions {
        var replies: [(Waiter, Reply)] = []
        var deliver: (message: ServerMessage, observers: [Observer], subscribers: [Subscriber])?
        var finish: [Subscriber] = []
        var ended: (SignupConnectionEnd, [CheckedContinuation<SignupConnectionEnd, Never>])?
        var closeChannel = false
    }

    // MARK: Greeting

    /// The greeting, or nil and `waiter` kept until it comes.
    mutating func awaitGreeting(_ waiter: Waiter) -> Reply? {
        switch phase {
        case .greeting:
            if let greeting { return .success(greeting) }
            phase = .greeting(waiter: waiter)
            return nil
        case .open: return greeting.map { .success($0) } ?? .failure(.ended(.disconnected))
        case .ended(let end): return .failure(.ended(end))
        }
    }

    // MARK: Requests

    mutating func makeID() -> RequestID {
        nextID += 1
        return .integer(nextID)
    }

    init(eventBufferLimit: Int) {
        self.eventBufferLimit = eventBufferLimit
    }

    /// A request about to be sent waits for its reply; its end once the connection has ended.
    mutating func register(_ id: RequestID, unknownEvents: Bool = false, _ waiter: Waiter) -> SignupConnectionEnd? {
        if case .ended(let end) = phase { return end }
        pending.append((id, unknownEvents, waiter))
        return nil
    }

    /// The request gave up (cancelled, or its bytes could not be written).
    mutating func withdraw(_ id: RequestID, because error: SignupClientError) -> Actions {
        var actions = Actions()
        if let index = pending.firstIndex(where: { $0.id == id }) {
            actions.replies.append((pending.remove(at: index).waiter, .failure(error)))
        }
        return actions
    }

    // MARK: Readers

    mutating func subscribe(_ subscriber: Subscriber) -> Int? {
        if case .ended = phase { return nil }
        nextToken += 1
        subscribers[nextToken] = subscriber
        return nextToken
    }

    mutating func unsubscribe(_ token: Int) {
        subscribers[token] = nil
    }

    mutating func observe(_ observer: @escaping Observer) {
        observers.append(observer)
    }

    mutating func awaitEnd(_ waiter: CheckedContinuation<SignupConnectionEnd, Never>) -> SignupConnectionEnd? {
        if case .ended(let end) = phase { return end }
        endWaiters.append(waiter)
        return nil
    }

    // MARK: Input

    /// A line arrived.
    mutating func received(_ message: ServerMessage) -> Actions {
        var actions = Actions()
        switch phase {
        case .ended:
            return actions
        case .greeting(let waiter):
            greeting = message
            phase = .open
            if let waiter { actions.replies.append((waiter, .success(message))) }
            return actions
        case .open:
            break
        }
        // Observers (a form) see every line, replies included, in order.
        var isReply = false
        if let index = pending.firstIndex(where: { message.answers($0.id, unknownEvents: $0.unknownEvents) }) {
            let waiter = pending.remove(at: index).waiter
            actions.replies.append((waiter, message.refusal.map { .failure(.refused($0)) } ?? .success(message)))
            isReply = true
        }
        actions.deliver = (message, observers, isReply ? [] : Array(subscribers.values))
        if case .bye(let reason) = message.event {
            // The daemon's last line: readers get it, then the connection ends as that bye.
            let ending = end(.bye(reason: reason))
            actions.replies += ending.replies
            actions.finish = ending.finish
            actions.ended = ending.ended
            actions.closeChannel = true
        }
        return actions
    }

    /// The channel closed (or failed): everyone waiting learns how it ended.
    mutating func channelEnded(_ failure: SignupClientError? = nil) -> Actions {
        end(failure.map { .failed($0) } ?? .disconnected)
    }

    /// A reader fell ``eventBufferLimit`` events behind.
    mutating func overflowed() -> Actions {
        end(.failed(.eventBufferFull(limit: eventBufferLimit)))
    }

    /// The connection ends as `end` (the first end wins).
    mutating func end(_ end: SignupConnectionEnd) -> Actions {
        var actions = Actions()
        if case .ended = phase { return actions }
        if case .greeting(let waiter?) = phase { actions.replies.append((waiter, .failure(.ended(end)))) }
        phase = .ended(end)
        actions.replies += pending.map { ($0.waiter, .failure(.ended(end))) }
        pending = []
        actions.finish = Array(subscribers.values)
        subscribers = [:]
        observers = []
        actions.ended = (end, endWaiters)
        endWaiters = []
        actions.closeChannel = true
        return actions
    }
}
