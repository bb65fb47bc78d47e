import Synchronization

/// A semaphore for async code: `wait()` suspends, holding no thread, until a `signal()`
/// lets it go; a `signal()` with nobody waiting lets the next `wait()` through.
final class AsyncGate: Sendable {
    private struct State {
        var permits = 0
        var waiting: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())

    func wait() async {
        await withCheckedContinuation { continuation in
            let permitted = state.withLock { state in
                guard state.permits > 0 else {
                    state.waiting.append(continuation)
                    return false
                }
                state.permits -= 1
                return true
            }
            if permitted { continuation.resume() }
        }
    }

    func signal() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard !state.waiting.isEmpty else {
                state.permits += 1
                return nil
            }
            return state.waiting.removeFirst()
        }
        next?.resume()
    }
}
