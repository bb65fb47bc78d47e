import FormEngine
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import SignupProtocol

#if canImport(Glibc)
import Glibc
#endif

/// Carries client connections and sessions across a restart of the daemon through
/// systemd's file descriptor store (issue 16; PROTOCOL.md "Restarts").
///
/// A connection is stored (`FDSTORE=1`, `FDNAME=`) once it holds a session, within its
/// uid's `CarryBudget` (one that does not is tried again at the restart), and removed at close (the names are unique per boot: `c.START.N`). On the restart signal (`RestartKillSignal=SIGUSR1` in signupd.service) the daemon
/// stops handling requests, lets running signups and logins finish, saves every session and
/// connection into a sealed memfd which it stores too, and exits; the next process restores
/// them (`restore`) before it reports READY=1.
final class HandoverCoordinator: Sendable {
    private struct Entry: Sendable {
        let name: String
        let fd: Int32
        let output: ConnectionOutput
        let handler: NIOLoopBound<ConnectionHandler>
        /// When its client last sent something (`touch`, every few seconds at most).
        var lastUsed = NIODeadline.now()
    }

    /// Everything that changes, under one lock: each method decides under it and does its
    /// I/O (the descriptor store, the scan for a descriptor, logging) after.
    private struct State {
        /// What the previous process left, until `restore` takes it.
        var inherited: InheritedDescriptors
        var entries: [ObjectIdentifier: Entry] = [:]
        /// Descriptors of stored connections, skipped when looking for a new one's.
        var knownDescriptors: Set<Int32> = []
        var counter: UInt64 = 0
        /// The problems logged once already.
        var warned: Set<String> = []
        /// How many connections each uid may have stored, and how fast.
        var budget: CarryBudget
    }

    private let logger: Logger
    private let state: NIOLockedValueBox<State>
    private let prefix: String

    /// What the previous process left, once (restore takes it).
    func takeInherited() -> InheritedDescriptors {
        state.withLockedValue { state in
            defer { state.inherited = InheritedDescriptors() }
            return state.inherited
        }
    }

    /// A carried connection this long without a request is the first to give its place.
    private let idleAfter: TimeAmount
    /// The most the handover state may have (`--max-handover-bytes`): within what the next
    /// process reads, and small enough to write well within the stop timeout.
    private let stateLimit: Int

    init(
        inherited: InheritedDescriptors, logger: Logger, budget: CarryBudget = CarryBudget(), idleAfter: TimeAmount = .seconds(300),
        stateLimit: Int = DaemonTuning.standard.maxHandoverBytes
    ) {
        state = NIOLockedValueBox(State(inherited: inherited, budget: budget))
        self.logger = logger
        self.idleAfter = idleAfter
        self.stateLimit = stateLimit
        // Unique across the processes of one boot: a name is never reused while stored.
        prefix = "\(DescriptorStore.connectionPrefix)\(String(NIODeadline.now().uptimeNanoseconds, radix: 36))."
    }

    // MARK: Connections come and go

    /// Stores a connection that now holds a session; its name, or nil if it was not stored
    /// (its uid's `CarryBudget` is spent, or systemd did not take it): it is served as any
    /// other, and a restart closes it.
    func store(channel: Channel, output: ConnectionOutput, handler: ConnectionHandler) -> String? {
        let peer = output.principal.key
        let now = NIODeadline.now()
        let decision: (refused: (key: String, message: String)?, displaced: Entry?) = state.withLockedValue { state in
            guard let refusal = state.budget.take(peer: peer, now: now) else { return (nil, nil) }
            if refusal == .total, let displaced = Self.displace(for: peer, in: &state, now: now, idleAfter: idleAfter) { return (nil, displaced) }
            let budget = state.budget
            return switch refusal {
            case .perPeer: (("carry \(peer) \(refusal)", "\(peer) holds sessions on more than \(budget.maxPerUID) connections: the others are not carried across a restart (a restart closes them)"), nil)
            case .rate: (("carry \(peer) \(refusal)", "\(peer) opens sessions on new connections faster than \(budget.burst) at once, then \(budget.perSecond) a second: those are not carried across a restart (a restart closes them)"), nil)
            case .total: (("carry total", "more than \(budget.maxTotal) connections hold sessions and each uid holds its share: the others are not carried across a restart (a restart closes them)"), nil)
            }
        }
        if let refused = decision.refused {
            warnOnce(refused.message, key: refused.key)
            return nil
        }
        if let displaced = decision.displaced {
            // Out of systemd's store, and no longer this process's to hand over: a restart
            // closes it (its sessions wait for resume, as when a connection drops).
            DescriptorStore.remove(displaced.name)
            displaced.output.eventLoop.execute { displaced.handler.value.handover.name = nil }
            warnOnce(
                "the restart store is full: \(displaced.output.principal.key) gave a place to \(peer) (its least recently used connection is no longer carried across a restart)",
                key: "carry displaced \(displaced.output.principal.key)")
        }
        guard let fd = descriptor(of: channel) else {
            state.withLockedValue { $0.budget.release(peer: peer) }
            warnOnce("a connection's descriptor was not found: it will not survive a restart")
            return nil
        }
        guard let name = add(fd, output: output, handler: handler) else {
            warnOnce("systemd did not take a connection into its file descriptor store (is FileDescriptorStoreMax= full?): connections beyond it end at a restart")
            return nil
        }
        return name
    }

    /// Gives `fd` to systemd under a new name and keeps track of it; nil (and the place its
    /// user took given back) if systemd did not take it.
    private func add(_ fd: Int32, output: ConnectionOutput, handler: ConnectionHandler) -> String? {
        let name = prefix + String(state.withLockedValue { $0.counter += 1; return $0.counter })
        guard DescriptorStore.add(fd, name: name) else {
            state.withLockedValue { $0.budget.release(peer: output.principal.key) }
            return nil
        }
        remember(Entry(name: name, fd: fd, output: output, handler: NIOLoopBound(handler, eventLoop: output.eventLoop)))
        return name
    }

    /// At the restart, a connection not stored yet (it never held a session, or its user's
    /// budget was spent when it first did) is stored now if that budget allows, so that a
    /// request its client sends meanwhile is answered by the next process: closing it made
    /// a `ping` on a connection accepted just before the restart fail (the boot test's
    /// upgrade, CI: 1 of 163 pings, "Broken pipe"). No place is taken from anyone, and a
    /// refusal is not logged here: the restart's notice counts what it closes.
    /// `descriptors` maps socket cookies to descriptors (`unknownDescriptors`), one scan for all.
    func storeAtRestart(channel: Channel, output: ConnectionOutput, handler: ConnectionHandler, descriptors: [UInt64: Int32]) -> StoredAtRestart {
        let peer = output.principal.key
        let taken = state.withLockedValue { $0.budget.take(peer: peer, now: .now()) == nil }
        guard taken else { return .overShare }
        guard let fd = DescriptorStore.cookie(of: channel).flatMap({ descriptors[$0] }) ?? descriptor(of: channel) else {
            state.withLockedValue { $0.budget.release(peer: peer) }
            return .notTaken
        }
        return add(fd, output: output, handler: handler).map { .stored($0) } ?? .notTaken
    }

    /// What became of a connection not stored before the restart.
    enum StoredAtRestart: Sendable {
        case stored(String)
        /// Its user's share of the store is taken.
        case overShare
        /// Its descriptor was not found, or systemd did not take it.
        case notTaken
    }

    /// A connection the restart looked at, from its loop: carried, gone already (its client
    /// closed it), or closed now and why.
    enum RestartOutcome: Sendable {
        case carried, gone
        case closed(StoredAtRestart, heldSessions: Bool)
    }

    /// Every open descriptor that is a socket and not a stored connection's, by socket
    /// cookie: the open ones only (`/proc/self/fd`), not every number up to LimitNOFILE=.
    private func unknownDescriptors() -> [UInt64: Int32] {
        let known = state.withLockedValue { $0.knownDescriptors }
        var found: [UInt64: Int32] = [:]
        guard let directory = opendir("/proc/self/fd") else { return found }
        defer { closedir(directory) }
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard let fd = Int32(name), fd > 2, !known.contains(fd), let cookie = DescriptorStore.cookie(ofDescriptor: fd) else { continue }
            found[cookie] = fd
        }
        return found
    }

    /// The store is full: the connection that gives its place to `peer`'s newcomer
    /// (`CarryDisplacement`), taken out of the entries and the budget; nil if none does.
    private static func displace(for peer: PeerKey, in state: inout State, now: NIODeadline, idleAfter: TimeAmount) -> Entry? {
        let candidates = state.entries.map { CarryDisplacement.Candidate(id: $0.key, peer: $0.value.output.principal.key, lastUsed: $0.value.lastUsed) }
        guard let chosen = CarryDisplacement.choose(for: peer, among: candidates, budget: state.budget, now: now, idleAfter: idleAfter),
            state.budget.move(from: chosen.peer, to: peer, now: now) == nil,
            let entry = state.entries.removeValue(forKey: chosen.id)
        else { return nil }
        state.knownDescriptors.remove(entry.fd)
        return entry
    }

    /// The client of a stored connection sent something: it is in use (least recently used
    /// connections give their place first). Called every few seconds at most per connection.
    func touch(output: ConnectionOutput) {
        let now = NIODeadline.now()
        state.withLockedValue { $0.entries[ObjectIdentifier(output)]?.lastUsed = now }
    }

    /// Keeps track of a connection adopted from the store (it is stored already).
    func register(output: ConnectionOutput, name: String, handler: ConnectionHandler) {
        let fd = descriptor(of: output.channel) ?? -1
        let entry = Entry(name: name, fd: fd, output: output, handler: NIOLoopBound(handler, eventLoop: output.eventLoop))
        state.withLockedValue { state in
            state.budget.adopt(peer: output.principal.key, now: .now())
            state.entries[ObjectIdentifier(output)] = entry
            state.knownDescriptors.insert(fd)
        }
    }

    /// A connection closed: out of the store, so the client sees the hangup, unless it was
    /// handed over to the next process.
    func closed(output: ConnectionOutput, name: String?, handedOver: Bool) {
        state.withLockedValue { state in
            // A displaced connection gave its place back already (its entry is gone).
            guard let entry = state.entries.removeValue(forKey: ObjectIdentifier(output)) else { return }
            state.knownDescriptors.remove(entry.fd)
            state.budget.release(peer: output.principal.key)
        }
        guard let name else { return }
        if !handedOver { DescriptorStore.remove(name) }
    }

    /// The first of each kind of problem is logged: one per connection would flood the journal.
    private func warnOnce(_ message: String, key: String? = nil) {
        let first = state.withLockedValue { $0.warned.insert(key ?? message).inserted }
        if first { logger.warning("\(message)") }
    }

    private func remember(_ entry: Entry) {
        state.withLockedValue { state in
            state.entries[ObjectIdentifier(entry.output)] = entry
            state.knownDescriptors.insert(entry.fd)
        }
    }

    /// The connections stored now.
    private var allEntries: [Entry] { state.withLockedValue { Array($0.entries.values) } }

    /// NIO does not say which descriptor a channel has: the one whose socket cookie matches.
    /// New descriptors are the lowest free ones, so the search, which skips the descriptors
    /// of known connections, ends early; a full search follows if a stale entry hid it. The
    /// search runs outside the lock, on a copy of the known set (a connection is stored
    /// once, when it first holds a session).
    private func descriptor(of channel: Channel) -> Int32? {
        guard let cookie = DescriptorStore.cookie(of: channel) else { return nil }
        var limit = rlimit()
        getrlimit(RLIMIT_NOFILE_VALUE, &limit)
        let last = Int32(clamping: min(limit.rlim_cur, 1 << 20))
        let known = state.withLockedValue { $0.knownDescriptors }
        for fd in Int32(3)..<last where !known.contains(fd) {
            if DescriptorStore.cookie(ofDescriptor: fd) == cookie { return fd }
        }
        return known.sorted().first { DescriptorStore.cookie(ofDescriptor: $0) == cookie }
    }

    // MARK: The old process hands over

    /// Saves every session and connection and puts the state into the store. Returns how
    /// many sessions and connections were handed over, and how long each step took.
    func handOver(services: SessionServices, drain: ShutdownDrain, loop: EventLoop) async -> (sessions: Int, connections: Int, stages: TimedStages) {
        var stages = TimedStages()
        // 1. No more requests: what clients send now waits in their sockets. A connection
        //    not in the store is not carried whatever happens: it closes now, not at the end,
        //    so that it is not served meanwhile (helper-23: 2,200 such connections of a views
        //    attack kept every step's round of the loops waiting; the hand-over took 5.9 s).
        //    Those its user's budget allows are stored now instead (`storeAtRestart`).
        let stored = Set(allEntries.map { ObjectIdentifier($0.output) })
        let candidates = services.registry.allConnections.filter { !stored.contains(ObjectIdentifier($0)) }
        let descriptors = candidates.isEmpty ? [:] : unknownDescriptors()
        let outcomes = await onTheirLoops(candidates, loop: \.eventLoop) { output -> (ConnectionOutput, RestartOutcome) in
            let handler = try? output.channel.pipeline.syncOperations.handler(type: ConnectionHandler.self)
            return (output, handler?.storeAtRestart(output: output, descriptors: descriptors) ?? .gone)
        }
        var overShare: [PeerKey: Int] = [:]
        var notTaken = 0
        var heldSessions = false
        for (output, outcome) in outcomes {
            guard case .closed(let why, let held) = outcome else { continue }
            output.channel.close(promise: nil)
            heldSessions = heldSessions || held
            if case .overShare = why { overShare[output.principal.key, default: 0] += 1 } else { notTaken += 1 }
        }
        // Said, not only counted: which users' connections a restart does not carry (helper-24).
        if !overShare.isEmpty {
            // "uid 1003: 1 connection, uid 1004 (client web-7): 3 connections": who, and how many.
            let byUser = overShare.sorted { ($0.value, $0.key.description) > ($1.value, $1.key.description) }.prefix(8).map { "\($0.key): \(Self.connections($0.value))" }
            let total = overShare.values.reduce(0, +)
            let sessions = heldSessions ? "; the sessions opened on \(total == 1 ? "it" : "them") wait for resume in the next process (with --resume-grace; at most --max-resumable-sessions-per-user each user)" : ""
            logger.notice(
                "a restart closes \(Self.connections(total)) over \(overShare.count == 1 ? "its user's" : "their users'") share of systemd's file descriptor store\(sessions)",
                metadata: ["connections": "\(total)", "by": "\(byUser.joined(separator: ", "))\(overShare.count > 8 ? ", …" : "")"])
        }
        if notTaken > 0 {
            logger.warning("a restart closes \(Self.connections(notTaken)) that systemd did not take into its file descriptor store (is FileDescriptorStoreMax= full?)", metadata: ["connections": "\(notTaken)"])
        }
        await onEveryConnection { $0.pauseForHandover() }
        stages.finished("pause")
        // 2. Running signups and logins finish and are answered: the shutdown drain, up to
        //    its `bye` (same grace period).
        await drain.begin(on: loop).finishWork()
        stages.finished("drain")
        // 3. Sessions stop where they are; events they sent before are queued to their
        //    connections' loops ahead of step 4.
        let frozen = await onTheirLoops(services.directory.all, loop: \.eventLoop) { session -> Frozen in
            let saved = session.freezeForHandover()
            return Frozen(
                id: session.id, state: saved.state, seq: saved.seq, age: saved.age, owner: saved.owner, views: saved.views,
                detachedFor: saved.detachedFor, principal: session.principal, resume: session.resumeSecret
            )
        }
        stages.finished("freeze")
        // 4. Connections: their unhandled input and unsent output, then close (systemd keeps them).
        var connections: [HandoverState.ConnectionRecord] = []
        var names: [ObjectIdentifier: String] = [:]
        let all = allEntries
        let attempts = await onTheirLoops(all, loop: \.output.eventLoop) { entry in (entry, Self.attempt(entry)) }
        for (entry, attempt) in attempts {
            let record: HandoverState.ConnectionRecord?
            switch attempt {
            case .saved(let saved): record = saved
            case .gone: record = nil
            case .waiting: record = await handOver(entry)
            }
            if let record {
                connections.append(record)
                names[ObjectIdentifier(entry.output)] = entry.name
            }
        }
        stages.finished("connections")
        // 5. Only what is consistent: a session whose owner's connection is not carried
        //    waits for `resume` in the next process (with a grace), like one whose owner dropped.
        let state = Self.state(frozen: frozen, connections: connections, names: names, keepDetached: services.resumeGrace.map { $0 > .zero } ?? false)
        stages.finished("state")
        var sessions = state.sessions.count
        var carriedConnections = connections.count
        do {
            let written = try HandoverCodec.encode(state, limit: stateLimit)
            stages.finished("encode")
            sessions -= written.leftOut.values.reduce(0, +)
            for (owner, count) in written.leftOut.sorted(by: { $0.key < $1.key }) {
                logger.warning(
                    "\(owner)'s sessions were over their fair share of the handover state: \(count) of them end at this restart (their connections are told with closed)",
                    metadata: ["sessions": "\(count)", "limit": "\(stateLimit)"])
            }
            for (owner, count) in written.connectionsLeftOut.sorted(by: { $0.key < $1.key }) {
                logger.warning(
                    "\(owner)'s connections held more in flight (unsent output, unhandled input) than its fair share of the handover state: \(count) of them are not carried (the next process says bye restarted; the sessions they opened wait for resume)",
                    metadata: ["connections": "\(count)", "limit": "\(stateLimit)"])
            }
            carriedConnections -= written.connectionsLeftOut.values.reduce(0, +)
            let fd = try DescriptorStore.sealedMemfd(written.bytes)
            DescriptorStore.remove(DescriptorStore.stateName)
            DescriptorStore.add(fd, name: DescriptorStore.stateName)
            close(fd)
        } catch {
            logger.error("the handover state could not be written; the next process will close the connections", metadata: ["error": "\(error)"])
        }
        // Everything sent to systemd is in the store before this process exits.
        DescriptorStore.barrier()
        stages.finished("store")
        return (sessions, carriedConnections, stages)
    }

    /// A session as frozen (`Session.freezeForHandover`), with its id, owner and secret.
    struct Frozen: Sendable {
        var id: String
        var state: FormSession
        var seq: UInt64
        var age: TimeAmount
        var owner: ConnectionOutput?
        var views: [ConnectionOutput]
        var detachedFor: TimeAmount?
        var principal: Principal
        var resume: String
    }

    /// The state to hand over: the saved connections (`names` maps each one's output to its
    /// record's name) and the frozen sessions whose owner is among them; a connection's
    /// list keeps only sessions that are handed over.
    static func state(frozen: [Frozen], connections: [HandoverState.ConnectionRecord], names: [ObjectIdentifier: String], keepDetached: Bool = true) -> HandoverState {
        var sessions: [HandoverState.SessionRecord] = []
        for session in frozen {
            let owner = session.owner.flatMap { names[ObjectIdentifier($0)] }
            // Its opener is not carried: resumable in the next process, or (no grace) gone.
            var detachedFor = session.detachedFor
            if owner == nil {
                guard keepDetached else { continue }
                detachedFor = detachedFor ?? .zero
            }
            let views = session.views.compactMap { names[ObjectIdentifier($0)] }
            sessions.append(.init(
                id: session.id, form: session.state, seq: session.seq, ageNanoseconds: session.age.nanoseconds, owner: owner, views: views,
                uid: session.principal.uid, client: session.principal.client, address: session.principal.address?.text, resume: session.resume,
                detachedNanoseconds: detachedFor?.nanoseconds
            ))
        }
        let ids = Set(sessions.map(\.id))
        var connections = connections
        for index in connections.indices { connections[index].sessions.removeAll { !ids.contains($0) } }
        return HandoverState(sessions: sessions, connections: connections)
    }

    /// "1 connection", "35 connections".
    private static func connections(_ count: Int) -> String { count == 1 ? "1 connection" : "\(count) connections" }

    private func onEveryConnection(_ body: @escaping @Sendable (ConnectionHandler) -> Void) async {
        _ = await onTheirLoops(allEntries, loop: \.output.eventLoop) { body($0.handler.value) }
    }

    private enum Attempt: Sendable { case saved(HandoverState.ConnectionRecord), gone, waiting }

    /// On the connection's loop: its record, unless it is gone or awaits an answer.
    private static func attempt(_ entry: Entry) -> Attempt {
        let handler = entry.handler.value
        guard handler.output?.channel.isActive == true, handler.handover.name != nil else { return .gone }
        // What other loops sent it and its share had not reached yet goes with it.
        handler.output?.handlePosted(all: true)
        return handler.handOver().map { .saved($0) } ?? .waiting
    }

    /// One connection's record, once the answer it awaits from elsewhere (a token check,
    /// within milliseconds) has come; none if it has not within a second.
    private func handOver(_ entry: Entry) async -> HandoverState.ConnectionRecord? {
        let loop = entry.output.eventLoop
        let attempt = try? await loop.flatSubmit {
            entry.handler.value.whenReplied(within: .seconds(1)).map { Self.attempt(entry) }
        }.get()
        guard case .saved(let record) = attempt else { return nil }
        return record
    }
}

#if canImport(Glibc)
private let RLIMIT_NOFILE_VALUE = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
#endif
