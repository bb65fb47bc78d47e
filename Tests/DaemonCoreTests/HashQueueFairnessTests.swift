import Dispatch
import NIOConcurrencyHelpers
import Testing
@testable import SignupDaemonCore

/// The hash queue when it is full: the biggest holder pays, not the newcomer.
@Suite struct HashQueueFairnessTests {
    private func job(_ uid: UInt32, _ name: String, log: NIOLockedValueBox<[String]>, run: @escaping @Sendable () -> Void = {}) -> HashQueue.Job {
        var job = HashQueue.Job(
            peer: PeerKey(uid: uid), isWanted: { true }, run: { run(); log.withLockedValue { $0.append("ran \(name)") } },
            abandon: { log.withLockedValue { $0.append("abandoned \(name)") } }
        )
        job.displace = { log.withLockedValue { $0.append("displaced \(name)") } }
        return job
    }

    /// A login takes its place at submit and holds it through its store lookup: the bounds
    /// count it all along, so a burst of pipelined submits is refused at once.
    @Test func aReservedPlaceCountsUntilItsJobEndsOrItIsGivenBack() async throws {
        let queue = HashQueue(threads: 1, maxPerUID: 2, maxTotal: 8)
        let log = NIOLockedValueBox<[String]>([])
        let first = try queue.reserve(peer: 1)
        let second = try queue.reserve(peer: 1)
        #expect(queue.depth(peer: 1) == (total: 2, user: 2))
        #expect(queue.wouldAccept(peer: 1) == .userQueueFull)
        #expect(throws: HashQueue.Refusal.userQueueFull) { try queue.reserve(peer: 1) }
        #expect(queue.wouldAccept(peer: 2) == nil)
        // Given back unused: room again.
        queue.release(first)
        #expect(queue.depth(peer: 1) == (total: 1, user: 1) && queue.wouldAccept(peer: 1) == nil)
        // Its job runs in the place, which is given back when the job ends (one thread: the
        // job queued after it runs only once it has ended).
        let after = DispatchSemaphore(value: 0)
        queue.enqueue(job(1, "a", log: log), in: second)
        try queue.enqueue(job(2, "z", log: log) { after.signal() })
        after.wait()
        #expect(queue.depth(peer: 1).user == 0)
        #expect(log.withLockedValue { $0 }.first == "ran a")
        // After the stop, a job in a reserved place is abandoned and its place given back.
        let late = try queue.reserve(peer: 1)
        queue.cancelAll()
        queue.enqueue(job(1, "b", log: log), in: late)
        #expect(log.withLockedValue { $0 }.contains("abandoned b") && queue.depth(peer: 1).user == 0)
        try await queue.shutdown()
    }

    @Test func aFullQueueDisplacesTheBiggestHoldersNewestJob() async throws {
        let queue = HashQueue(threads: 1, maxPerUID: 10, maxTotal: 4)
        let log = NIOLockedValueBox<[String]>([])
        let gate = DispatchSemaphore(value: 0)
        let started = DispatchSemaphore(value: 0)
        // uid 1 holds the only thread and two queued jobs; uid 2 one: the queue is full.
        try queue.enqueue(job(1, "a", log: log) { started.signal(); gate.wait() })
        started.wait()
        try queue.enqueue(job(1, "b", log: log))
        try queue.enqueue(job(1, "c", log: log))
        try queue.enqueue(job(2, "d", log: log))
        #expect(queue.depth(peer: 1) == (total: 4, user: 3))
        // A uid holding nothing is admitted; uid 1's newest queued job gives way.
        #expect(queue.wouldAccept(peer: 3) == nil)
        try queue.enqueue(job(3, "e", log: log))
        #expect(log.withLockedValue { $0 } == ["displaced c"])
        #expect(queue.depth(peer: 1) == (total: 4, user: 2))
        // uid 2 (one job) against uid 1 (two): not two more, so no displacing back and forth.
        #expect(queue.wouldAccept(peer: 2) == .queueFull)
        #expect(throws: HashQueue.Refusal.queueFull) { try queue.enqueue(job(2, "f", log: log)) }
        gate.signal()
        try await queue.shutdown()
        let entries = log.withLockedValue { $0 }
        #expect(entries.first == "displaced c" && !entries.contains("ran c") && !entries.contains { $0.hasSuffix(" f") })
    }
}
