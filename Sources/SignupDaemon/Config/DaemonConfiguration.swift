import FormEngine
import SignupProtocol

/// Everything the daemon can be told: where it listens and stores, and its tuning (every
/// limit, rate and timeout, `DaemonTuning`, read through as if they were members here).
@dynamicMemberLookup
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

        /// For `status`: the kind and where (never a password).
        var description: String {
            switch self {
            case .sqlite(let path): "sqlite \(path)"
            case .memory: "memory"
            case .postgres(let settings): "postgresql \(settings.url.redacted)"
            }
        }
    }

    /// Argon2id cost (libsodium `crypto_pwhash`).
    struct HashCost: Sendable, Equatable {
        var operations: UInt64
        var memoryBytes: Int
    }

    var listener: Listener
    var store: Store
    var tuning = DaemonTuning()
    /// Exit after this many seconds without connections; nil: never.
    var idleExitSeconds: Int?
    var availabilityURL: AvailabilityURLTemplate?
    /// For an `https://` availability URL: its trust, loaded at start.
    var availabilityTLS: AvailabilityTLS?
    /// Peers that may name the clients they speak for (`--trusted-bridge-group`, `--trusted-bridge-uid`).
    var trustedBridges = TrustedBridges.none
    /// Who may pause sign-up and see everything (`--admin-group`; root always).
    var administrators = Administrators(uids: [0])
    /// Over how long one peer's repeated log events are summarised (`LogSummary`).
    var logSummarySeconds = 60
    /// Where metrics are served (`--metrics-socket`, `--metrics-listen`); none by default.
    var metricsListeners: [MetricsEndpoint.Listener] = []
    var hashCost: HashCost
    var hashConcurrency: Int
    /// Store calls in the store at once (`StoreTurns`); past it they wait in turns per peer.
    /// PostgreSQL: its pool's connections; SQLite and memory: the event loops' count (GRDB
    /// reads in parallel, and its writes run one at a time whatever this says).
    var storeWidth: Int {
        switch store {
        case .postgres(let settings): max(1, settings.poolSize)
        case .sqlite, .memory: max(2, eventLoopThreads)
        }
    }
    var eventLoopThreads: Int
    /// `--pin-event-loops`.
    var eventLoopPinning: EventLoopPinning = .auto
    var serverVersion = signupdVersion
    /// Operator forms and catalogues (`--forms-dir`, `--messages-dir`), re-read on SIGHUP.
    var formDirectories = FormDirectories(forms: FormDirectories.defaultForms, messages: FormDirectories.defaultMessages, formsRequired: false, messagesRequired: false)
    /// Where the last form configuration that loaded is kept (`LastGoodForms`): beside the
    /// SQLite database, in $STATE_DIRECTORY with PostgreSQL; nil for `:memory:`.
    var lastGoodFormsPath: String?

    subscript<T>(dynamicMember keyPath: WritableKeyPath<DaemonTuning, T>) -> T {
        get { tuning[keyPath: keyPath] }
        set { tuning[keyPath: keyPath] = newValue }
    }

    var formConfiguration: FormConfiguration {
        FormConfiguration(checkTimeout: tuning.availabilityTimeout, catalogues: MessageCatalogues(), usernameRule: .identity, phoneNumbers: .libphonenumber)
    }
}

/// The daemon's version, shown in `hello` and `--version`.
let signupdVersion = "0.1.0"
