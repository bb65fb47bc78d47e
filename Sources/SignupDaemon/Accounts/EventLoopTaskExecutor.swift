import NIOCore

/// Runs a task's jobs on one event loop (SE-0417's task executor preference): a store call
/// made from a connection's loop starts there and resumes there when the database answers,
/// instead of hopping to the global concurrent executor and back. On SQLite that is the
/// difference between two thread hops per availability check and four.
final class EventLoopTaskExecutor: TaskExecutor {
    let eventLoop: EventLoop

    init(_ eventLoop: EventLoop) {
        self.eventLoop = eventLoop
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        eventLoop.execute { [self] in
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}

extension EventLoop {
    /// `body`'s result as a future of this loop, its task preferring this loop to run on
    /// (`makeFutureWithTask` runs it on the global executor).
    func makeFutureWithLoopTask<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) -> EventLoopFuture<T> {
        let promise = makePromise(of: T.self)
        Task(executorPreference: EventLoopTaskExecutor(self)) {
            do {
                promise.succeed(try await body())
            } catch {
                promise.fail(error)
            }
        }
        return promise.futureResult
    }
}
