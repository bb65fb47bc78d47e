import NIOConcurrencyHelpers
import NIOPosix

/// The Argon2id work queue: one FIFO per peer uid, served round-robin across uids by a
/// fixed pool of threads, so that one uid flooding submits delays another uid's login by
/// at most one turn. Each uid and the whole queue have a bound; past it `enqueue` says no
/// at once (the caller answers "too many attempts") — except that when the whole queue
/// is full, a uid holding fewer jobs than the biggest holder is still admitted and the
/// biggest holder's newest queued job is displaced (refused) instead: the biggest
/// offender pays, so several uids together cannot shut another out. A job whose session has gone is
/// skipped when its turn comes, and `cancelAll` drops every queued job at shutdown.
final class HashQueue: Sendable {
    struct Job: Sendable {
        let peer: PeerKey
        /// Whether anyone still waits for the result; asked just before the job starts.
        let isWanted: @Sendable () -> Bool
        /// The hashing itself, on a pool thread.
        let run: @Sendable () -> Void
        /// Called instead of `run` when the job will never start.
        let abandon: @Sendable () -> Void
        /// Called instead of `run` when a uid with fewer jobs took its place in a full
        /// queue (the caller answers "too many attempts", as for a refused submit).
        var displace: @Sendable () -> Void = {}
    }

    enum Refusal: Error, Equatable { case userQueueFull, queueFull, stopped }

    private struct State {
        var queues: [PeerKey: [Job]] = [:]
        /// Uids with queued jobs, in round-robin order.
        var ring: [PeerKey] = []
        /// Queued plus running, per uid and in total.
        var perPeer: [PeerKey: Int] = [:]
        var total = 0
        var stopped = false
    }

    private let state = NIOLockedValueBox(State())
    private let pool: NIOThreadPool
    let maxPerUID: Int
    let maxTotal: Int

    init(threads: Int, maxPerUID: Int, maxTotal: Int) {
        pool = NIOThreadPool(numberOfThreads: threads)
        self.maxPerUID = maxPerUID
        self.maxTotal = maxTotal
        pool.start()
    }

    /// Whether a job for `uid` would be accepted now (for a prompt wire refusal).
    func wouldAccept(peer: PeerKey) -> Refusal? {
        state.withLockedValue { Self.refusal(for: peer, in: $0, maxPerUID: maxPerUID, maxTotal: maxTotal) }
    }

    private static func refusal(for peer: PeerKey, in state: State, maxPerUID: Int, maxTotal: Int) -> Refusal? {
        if state.stopped { return .stopped }
        if state.perPeer[peer, default: 0] >= maxPerUID { return .userQueueFull }
        if state.total >= maxTotal, displaceable(for: peer, in: state) == nil { return .queueFull }
        return nil
    }

    /// The uid whose newest queued job gives way to one of `uid`'s when the queue is full:
    /// the one holding the most jobs, if that is at least two more than `uid` holds (so
    /// that two uids of about the same size do not take turns displacing each other).
    private static func displaceable(for peer: PeerKey, in state: State) -> PeerKey? {
        let own = state.perPeer[peer, default: 0]
        var biggest: (peer: PeerKey, jobs: Int)?
        for (other, queue) in state.queues where !queue.isEmpty {
            let jobs = state.perPeer[other, default: 0]
            if jobs > (biggest?.jobs ?? 0) { biggest = (other, jobs) }
        }
        guard let biggest, biggest.peer != peer, biggest.jobs >= own + 2 else { return nil }
        return biggest.peer
    }

    /// A place in the queue taken before its job is known: a login holds one from its submit,
    /// through its store lookup, to its hash, so that the bounds count it all along (a burst
    /// of pipelined submits is refused at once, not after the lookups). Given back by
    /// `enqueue(_:in:)` or `release`.
    struct Reservation: Sendable {
        let peer: PeerKey
    }

    /// Takes a place for `uid`'s coming job, or says why not (displacing the biggest holder's
    /// newest queued job when the whole queue is full, as `enqueue` does).
    func reserve(peer: PeerKey) throws(Refusal) -> Reservation {
        let (refusal, displaced): (Refusal?, Job?) = state.withLockedValue { state in
            if let refusal = Self.refusal(for: peer, in: state, maxPerUID: maxPerUID, maxTotal: maxTotal) { return (refusal, nil) }
            var displaced: Job?
            if state.total >= maxTotal, let victim = Self.displaceable(for: peer, in: state) {
                displaced = state.queues[victim]!.removeLast()
                if state.queues[victim]!.isEmpty {
                    state.queues[victim] = nil
                    state.ring.removeAll { $0 == victim }
                }
                state.perPeer[victim, default: 1] -= 1
                if state.perPeer[victim] == 0 { state.perPeer[victim] = nil }
                state.total -= 1
            }
            state.perPeer[peer, default: 0] += 1
            state.total += 1
            return (nil, displaced)
        }
        if let refusal { throw refusal }
        // Its runner (already submitted) takes the next job instead.
        displaced?.displace()
        return Reservation(peer: peer)
    }

    /// Queues a job, or says why not (the job is then neither run nor abandoned).
    func enqueue(_ job: Job) throws(Refusal) {
        enqueue(job, in: try reserve(peer: job.peer))
    }

    /// Queues a job in the place reserved for it. After `cancelAll` the job is abandoned.
    func enqueue(_ job: Job, in reservation: Reservation) {
        precondition(job.peer == reservation.peer, "a job in another peer's place")
        let stopped = state.withLockedValue { state in
            guard !state.stopped else { return true }
            if state.queues[job.peer, default: []].isEmpty { state.ring.append(job.peer) }
            state.queues[job.peer, default: []].append(job)
            return false
        }
        guard !stopped else {
            job.abandon()
            return finished(job.peer)
        }
        // One runner per job; each runner takes whichever job is next in round-robin order.
        pool.submit { [self] _ in runNext() }
    }

    /// Gives a reserved place back unused (the login ended before its hash).
    func release(_ reservation: Reservation) {
        finished(reservation.peer)
    }

    private func runNext() {
        let next: Job? = state.withLockedValue { state in
            guard !state.ring.isEmpty else { return nil }
            let peer = state.ring.removeFirst()
            let job = state.queues[peer]!.removeFirst()
            if state.queues[peer]!.isEmpty { state.queues[peer] = nil } else { state.ring.append(peer) }
            return job
        }
        guard let job = next else { return }
        defer { finished(job.peer) }
        if job.isWanted() { job.run() } else { job.abandon() }
    }

    private func finished(_ peer: PeerKey) {
        state.withLockedValue { state in
            state.perPeer[peer, default: 1] -= 1
            if state.perPeer[peer] == 0 { state.perPeer[peer] = nil }
            state.total -= 1
        }
    }

    /// Jobs queued or running, in total and for `uid` (for tests and logs).
    func depth(peer: PeerKey) -> (total: Int, user: Int) {
        state.withLockedValue { ($0.total, $0.perPeer[peer, default: 0]) }
    }

    /// Refuses new jobs and abandons every queued one; running jobs finish.
    func cancelAll() {
        let dropped: [Job] = state.withLockedValue { state in
            state.stopped = true
            let jobs = state.queues.values.flatMap { $0 }
            state.queues = [:]
            state.ring = []
            return jobs
        }
        // Their runners find the queue empty; the counts are settled here.
        for job in dropped {
            job.abandon()
            finished(job.peer)
        }
    }

    func shutdown() async throws {
        cancelAll()
        try await pool.shutdownGracefully()
    }
}
