import SignupProtocol

/// Every limit, rate and timeout the daemon has, with its default: stated here once. The
/// command line overrides only what it is given (`LimitOptions.apply`, `SecurityOptions.apply`,
/// `AvailabilityOptions.apply`), `--help` shows these values, and the in-process test daemon
/// starts from them too.
struct DaemonTuning: Sendable, Equatable {
    /// The defaults, for `--help`.
    static let standard = DaemonTuning()

    /// What `hello` announces: the longest line, sessions per connection, unread output.
    var limits = ServerLimits()
    var maxConnections = 16384
    /// A sixteenth of the total: room for other users.
    var maxConnectionsPerUID = 1024
    /// New connections per uid per second (bursts of twice that); nil: unlimited.
    var connectsPerUIDPerSecond: Int? = 100
    /// Unhandled input plus unread output of all connections together before the biggest holders are dropped.
    var maxBufferedBytes = 256 << 20
    /// Availability answers per peer uid and per session per second (bursts of twice that).
    var availabilityChecksPerUIDPerSecond = 50
    var availabilityChecksPerSessionPerSecond = 20
    /// How long an availability check may take before it counts as "Error contacting server".
    var availabilityTimeout: Duration = .seconds(3)
    /// A connection holding no session is closed after this many seconds without a request; nil: never.
    var idleConnectionSeconds: Int? = 600
    /// A session is closed after this many seconds without a request; nil: never.
    var sessionIdleSeconds: Int? = 900
    /// A session whose opener's connection dropped waits this long for `resume`; nil: it ends with the connection.
    var resumeGraceSeconds: Int? = 60
    /// Sessions of one user (uid, or front-end client) waiting for `resume` at once; past it the oldest ends.
    var maxResumableSessionsPerUser = 256
    /// Connections carried across a restart in systemd's file descriptor store, all uids
    /// together (signupd.service's FileDescriptorStoreMax= leaves room for them and the state).
    var maxCarriedConnections = 4096
    /// When the store is full, a carried connection this long without a request is the
    /// first to give its place to a newcomer (`CarryDisplacement`).
    var carryIdleSeconds = 300
    /// The most the handover state may have; past it each user keeps a fair share of its
    /// sessions (`HandoverShare`). The next process reads up to `HandoverCodec.maxReadBytes`.
    var maxHandoverBytes = 128 << 20
    /// Connections that may attach to one session besides its opener: each event of the
    /// session is written to every one, so an unbounded number made one request cost a
    /// thousand writes outside its uid's share (issue 27's fresh eyes).
    var maxViewsPerSession = 8
    /// Memory all sessions may hold (4 KiB each plus their values, in 4 KiB steps); past three quarters of
    /// it, an owner over its equal share gets no more (`SessionBytes`).
    var maxSessionBytes = 512 << 20
    /// Connections one client of a trusted front end may hold (a browser needs a few).
    var maxConnectionsPerClient = 64
    /// All connections of a trusted front end's uid together: its site-wide ceiling.
    var maxConnectionsPerBridge = 8192
    /// Failed logins per name from all front-end clients together in an hour before clients
    /// that never logged in to it are refused (NIST SP 800-63B §5.2.2's 100).
    var loginBackstopPerHour = 100
    var tokenLifetimeSeconds: Int64 = 86_400
    /// Failed logins per username from one uid before its further attempts back off.
    var loginAttemptsPerMinute = 5
    /// Password hashes queued or running for one peer uid, and in total.
    var maxQueuedHashesPerUID = 64
    var maxQueuedHashes = 256
    /// Expensive requests (open, attach, submit, sessions, locale, describe) allowed per connection per second.
    var expensiveRequestsPerSecond = 50
    /// `verify` and `logout` per connection per second: a front end checks a token on every
    /// page it serves, so these have a budget of their own, far above `open`'s.
    var tokenChecksPerSecond = 1000
    /// With PostgreSQL: connections kept at most, and how long a statement (or waiting for a
    /// connection) may take before the store counts as unavailable.
    var databasePoolSize = 8
    var databaseTimeout: Duration = .seconds(5)
    /// How long a stop waits for signups and logins in flight.
    var shutdownGraceSeconds = 20
}
