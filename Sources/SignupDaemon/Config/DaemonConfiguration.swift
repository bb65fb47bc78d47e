import FormEngine
import Protocol

/// Everything the daemon can be told, with the defaults documented in README.md.
struct DaemonConfiguration: Sendable {
    /// Where clients connect.
    enum Listener: Sendable {
        /// A socket systemd passed us (fd 3 onward).
        case inherited(fd: Int32, name: String)
        /// A path we bind ourselves and remove on exit.
        case path(String, mode: UInt32)
    }

    /// Which account store to open.
    enum Store: Sendable {
        case sqlite(path: String)
        case memory
        /// Shared by several hosts (`--database postgresql://…`).
        case postgres(PostgresStoreSettings)
    }

    /// Argon2id cost (libsodium `crypto_pwhash`).
    struct HashCost: Sendable, Equatable {
        var operations: UInt64
        var memoryBytes: Int
    }

    var listener: Listener
    var store: Store
    var limits = ServerLimits()
    var maxConnections = 16384
    var maxConnectionsPerUID = 1024
    /// New connections per uid per second (bursts of twice that); nil: unlimited.
    var connectsPerUIDPerSecond: Int? = 100
    /// Unhandled input plus unread output of all connections together before the biggest holders are dropped.
    var maxBufferedBytes = 256 << 20
    /// Availability answers per peer uid and per session per second (bursts of twice that).
    var availabilityChecksPerUIDPerSecond = 50
    var availabilityChecksPerSessionPerSecond = 20
    /// A connection holding no session is closed after this many seconds without a request; nil: never.
    var idleConnectionSeconds: Int? = 600
    /// A session is closed after this many seconds without a request; nil: never.
    var sessionIdleSeconds: Int? = 900
    /// Exit after this many seconds without connections; nil: never.
    var idleExitSeconds: Int?
    var availabilityURL: AvailabilityURLTemplate?
    /// For an `https://` availability URL: its trust, loaded at start.
    var availabilityTLS: AvailabilityTLS?
    var availabilityTimeout: Duration = .seconds(3)
    var hashCost: HashCost
    var hashConcurrency: Int
    var tokenLifetimeSeconds: Int64 = 86_400
    var loginAttemptsPerMinute = 5
    /// Password hashes queued or running for one peer uid, and in total.
    var maxQueuedHashesPerUID = 64
    var maxQueuedHashes = 256
    /// Expensive requests (open, attach, submit, verify) allowed per connection per second.
    var expensiveRequestsPerSecond = 50
    var eventLoopThreads: Int
    var shutdownGraceSeconds = 20
    var serverVersion = signupdVersion
    /// Operator forms and catalogues (`--forms-dir`, `--messages-dir`), re-read on SIGHUP.
    var formDirectories = FormDirectories(forms: FormDirectories.defaultForms, messages: FormDirectories.defaultMessages, formsRequired: false, messagesRequired: false)

    var formConfiguration: FormConfiguration {
        FormConfiguration(checkTimeout: availabilityTimeout, catalogues: MessageCatalogues(), usernameRule: .identity, phoneNumbers: .libphonenumber)
    }
}

/// The daemon's version, shown in `hello` and `--version`.
let signupdVersion = "0.1.0"
