import NIOConcurrencyHelpers

/// The account store's turns, shared per peer (issue 27). At most `width` calls are in the
/// store at once; past that, calls wait in a queue of their peer's (uid, or a front end's
/// client), and a freed place goes to the next peer in turn, not the next call: 400
/// connections of one uid flooding `verify` put one call of theirs ahead of another uid's
/// availability check, not 400. A state machine: the caller resumes whom it says.
struct StoreTurnsState<Waiter> {
    let width: Int
    private(set) var inStore = 0
    private var waiting: [PeerKey: [Waiter]] = [:]
    /// Peers with waiting calls, in the order their turns come.
    private var turns: [PeerKey] = []

    init(width: Int) {
        precondition(width > 0)
        self.width = width
    }

    enum Entry {
        /// In the store now.
        case proceed
        /// Queued: resumed by a later `leave`.
        case wait
    }

    mutating func enter(_ peer: PeerKey, _ waiter: Waiter) -> Entry {
        guard inStore >= width else {
            inStore += 1
            return .proceed
        }
        if waiting[peer] == nil { turns.append(peer) }
        waiting[peer, default: []].append(waiter)
        return .wait
    }

    /// A call left the store: the next peer's oldest waiting call, which takes its place.
    mutating func leave() -> Waiter? {
        guard !turns.isEmpty else {
            inStore -= 1
            return nil
        }
        let peer = turns.removeFirst()
        var queue = waiting[peer]!
        let next = queue.removeFirst()
        if queue.isEmpty {
            waiting[peer] = nil
        } else {
            waiting[peer] = queue
            turns.append(peer)
        }
        return next
    }

    var waitingCount: Int { waiting.values.reduce(0) { $0 + $1.count } }
}

/// `StoreTurnsState` for async callers.
final class StoreTurns: Sendable {
    private let state: NIOLockedValueBox<StoreTurnsState<CheckedContinuation<Void, Never>>>

    init(width: Int) {
        state = NIOLockedValueBox(StoreTurnsState(width: width))
    }

    var width: Int { state.withLockedValue { $0.width } }

    /// Runs `call` in `peer`'s turn.
    func run<T>(_ peer: PeerKey, _ call: () async throws(AccountStoreError) -> T) async throws(AccountStoreError) -> T {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            if state.withLockedValue({ $0.enter(peer, continuation) }) == .proceed { continuation.resume() }
        }
        defer { state.withLockedValue { $0.leave() }?.resume() }
        return try await call()
    }
}

extension StoreTurnsState: Sendable where Waiter: Sendable {}
