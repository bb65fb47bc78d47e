import Logging
import NIOConcurrencyHelpers
import NIOCore

/// Repeated events from one peer are summarised, not repeated (issue 26): a flood of
/// refusals must not fill the journal, nor hide everyone else's lines in it. For each
/// (event, peer) the first `firstLines` within `window` are logged as they come; the rest
/// are counted, and one line says how many there were once the window ends (`flush`, from
/// the daemon's once-a-second housekeeping, or the peer's next such event).
///
/// Every line names who: uid, pid, a front end's client and address, the session, in the
/// journal's fields and in its plain text (`Principal.logMetadata`). A summary also names
/// every account its left-out lines named (`user`, `name`; up to `maxNamed` of each, as a
/// list: one journal field per name), so that `journalctl SIGNUPD_USER=vic` finds guesses
/// at vic hidden among failures at other accounts (issue 27's fresh eyes).
final class LogSummary: Sendable {
    private struct Key: Hashable {
        var event: String
        var peer: PeerKey
        /// The existing account the event concerns (`user`): a failed login at one account
        /// is its own kind, so guesses at vic cannot hide among failures at a peer's own
        /// dummy accounts however many it makes (issue 27's fresh eyes, twice). Such events
        /// cost a password hash each, so their lines are bounded by the hash queue's share.
        var account: String?
    }
    private struct Tally {
        var level: Logger.Level
        var started: NIODeadline
        var logged = 0
        var left = 0
        /// The newest left-out event's metadata: the summary names who, as the lines did.
        var metadata: Logger.Metadata = [:]
        /// The accounts the left-out events named, per metadata key, in first-seen order.
        var named: [String: [String]] = [:]
        /// Left-out events whose account did not fit in `named`, per key.
        var unnamed: [String: Int] = [:]
    }
    /// The metadata keys that name an account.
    static let accountKeys = ["user", "name"]
    /// Accounts one summary names, per key; past it they are counted.
    static let maxNamed = 32
    private let tallies = NIOLockedValueBox<[Key: Tally]>([:])
    private let logger: Logger
    private let metrics: DaemonMetrics?
    let window: TimeAmount
    let firstLines: Int
    /// Peers tracked at once; past it, new peers share one tally (a flood of uids or
    /// clients cannot make this table grow without bound).
    static let maxTallies = 4096
    private static let crowd = PeerKey(uid: .max, client: .id("(many peers)"))

    init(logger: Logger, metrics: DaemonMetrics?, window: TimeAmount = .seconds(60), firstLines: Int = 3) {
        self.logger = logger
        self.metrics = metrics
        self.window = window
        self.firstLines = firstLines
    }

    /// Whether a line of `level` would be written at all.
    func logs(_ level: Logger.Level) -> Bool { logger.logLevel <= level }

    /// Logs `event` for `peer`, or counts it when the peer repeated it too often lately.
    func log(_ level: Logger.Level, _ event: String, peer: PeerKey, metadata: Logger.Metadata, now: NIODeadline = .now()) {
        guard logger.logLevel <= level else { return }
        var summary: (Tally, Key)?
        let write: Bool = tallies.withLockedValue { tallies in
            var key = Key(event: event, peer: peer, account: metadata["user"].map { "\($0)" })
            if tallies[key] == nil, tallies.count >= Self.maxTallies { key.peer = Self.crowd }
            var tally = tallies[key] ?? Tally(level: level, started: now)
            if now - tally.started >= window {
                if tally.left > 0 { summary = (tally, key) }
                tally = Tally(level: level, started: now)
            }
            defer { tallies[key] = tally }
            if tally.logged < firstLines {
                tally.logged += 1
                return true
            }
            tally.left += 1
            tally.metadata = metadata
            for key in Self.accountKeys {
                guard let value = metadata[key] else { continue }
                let name = "\(value)"
                if tally.named[key, default: []].contains(name) { continue }
                if tally.named[key, default: []].count < Self.maxNamed {
                    tally.named[key, default: []].append(name)
                } else {
                    tally.unnamed[key, default: 0] += 1
                }
            }
            return false
        }
        if let (tally, key) = summary { say(tally, key) }
        if write {
            logger.log(level: level, "\(event)", metadata: metadata)
        } else {
            metrics?.logLinesSummarised(1)
        }
    }

    /// Says how many lines each ended window left out, and forgets the ended windows;
    /// `all`: every window, ended or not (the process stops: nothing left out goes unsaid).
    func flush(now: NIODeadline = .now(), all: Bool = false) {
        let ended: [(Tally, Key)] = tallies.withLockedValue { tallies in
            let done = tallies.filter { all || now - $0.value.started >= window }
            for key in done.keys { tallies[key] = nil }
            return done.filter { $0.value.left > 0 }.map { ($0.value, $0.key) }
        }
        for (tally, key) in ended { say(tally, key) }
    }

    private func say(_ tally: Tally, _ key: Key) {
        var metadata = tally.metadata
        metadata["repeated"] = "\(tally.left)"
        metadata["within_seconds"] = "\(window.nanoseconds / 1_000_000_000)"
        for (key, names) in tally.named {
            metadata[key] = .array(names.map { .string($0) })
            if let more = tally.unnamed[key] { metadata["\(key)_not_named"] = "\(more)" }
        }
        let what = key.peer == Self.crowd ? "\(key.event), from many peers" : key.event
        logger.log(level: tally.level, "\(what): \(tally.left) more like it not logged separately", metadata: metadata)
    }
}
