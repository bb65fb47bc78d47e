import NIOConcurrencyHelpers

/// The memory sessions hold, per owner (a uid, or a front end's client) and in all (issue
/// 27): sessions were outside every budget, and sixteen uids filling sessions with the
/// longest values each form allows could make the daemon hold gigabytes. A session counts
/// `perSession` bytes plus the UTF-8 bytes of its values.
///
/// An owner may always hold `floor` bytes (a person's few forms). Past that, bytes are
/// refused to an owner holding half the limit, to an owner over its fair share (the limit
/// split equally between the owners holding any) once three quarters of the limit are
/// taken, and to everyone at the limit. So one owner alone leaves half for everyone else,
/// and when others come, the ones refused are those holding more than their share, never a
/// newcomer within it (nor anyone within the floor). A pure state machine: `SessionBytes`
/// holds it under a lock.
struct SessionBytesState: Sendable {
    /// What a session holds besides its values: its engine, holds and timers.
    static let perSession = 4096
    /// A session's values are reserved in steps of this many bytes, so a keystroke takes the
    /// budget's lock only when its session's values cross a step (issue 29: a lock per
    /// growing `set` cost a fifth of the throughput with 8 requests in flight).
    static let step = 4096

    /// What a session with `values` bytes of values should reserve for them, given that it
    /// reserves `reserved` now: rounded up to a step when they grow past it; given back
    /// down to a step above them only when they shrink more than a step below it, so a value
    /// typed and deleted across a step's edge does not take the lock at every keystroke.
    static func reservation(for values: Int, reserved: Int) -> Int {
        let rounded = (values + step - 1) / step * step
        if values > reserved { return rounded }
        if reserved > rounded + step { return rounded + step }
        return reserved
    }
    let limit: Int
    let floor: Int
    private(set) var total = 0
    private var held: [PeerKey: Int] = [:]

    init(limit: Int, floor: Int = 64 << 10) {
        self.limit = limit
        self.floor = floor
    }

    enum Refusal: Equatable, Sendable {
        /// The owner holds more than its share while the budget is mostly taken.
        case overShare(share: Int)
        /// The budget is taken.
        case full
    }

    /// Takes `bytes` more for `peer`, or says why not.
    mutating func take(_ bytes: Int, peer: PeerKey) -> Refusal? {
        let mine = held[peer] ?? 0
        if mine + bytes > floor {
            let holders = held.count + (mine == 0 ? 1 : 0)
            let share = max(floor, limit / holders)
            if total + bytes > limit { return .full }
            if mine + bytes > limit / 2 { return .overShare(share: limit / 2) }
            if mine + bytes > share, total + bytes > limit / 4 * 3 { return .overShare(share: share) }
        }
        adopt(bytes, peer: peer)
        return nil
    }

    /// Counts `bytes` without asking (a session carried from the previous process).
    mutating func adopt(_ bytes: Int, peer: PeerKey) {
        guard bytes > 0 else { return }
        held[peer, default: 0] += bytes
        total += bytes
    }

    /// Gives back `bytes` of `peer`'s (a value got shorter, a session ended).
    mutating func give(_ bytes: Int, peer: PeerKey) {
        guard bytes > 0, let mine = held[peer] else { return }
        let given = min(bytes, mine)
        total -= given
        held[peer] = mine == given ? nil : mine - given
    }

    func held(by peer: PeerKey) -> Int { held[peer] ?? 0 }
}

/// `SessionBytesState` for every session of the daemon, under a lock (a `set` that changes a
/// value's length takes it once).
final class SessionBytes: Sendable {
    private let state: NIOLockedValueBox<SessionBytesState>
    let limit: Int

    init(limit: Int) {
        state = NIOLockedValueBox(SessionBytesState(limit: limit))
        self.limit = limit
    }

    func take(_ bytes: Int, peer: PeerKey) -> SessionBytesState.Refusal? {
        guard bytes > 0 else { return nil }
        return state.withLockedValue { $0.take(bytes, peer: peer) }
    }

    func adopt(_ bytes: Int, peer: PeerKey) {
        state.withLockedValue { $0.adopt(bytes, peer: peer) }
    }

    func give(_ bytes: Int, peer: PeerKey) {
        guard bytes > 0 else { return }
        state.withLockedValue { $0.give(bytes, peer: peer) }
    }

    var total: Int { state.withLockedValue { $0.total } }
    func held(by peer: PeerKey) -> Int { state.withLockedValue { $0.held(by: peer) } }
}
