import FormEngine
import UnixIO

/// Where signupd listens and keeps its accounts.
struct PathOptions {
    /// Its options: names, help and the field each sets (CommandLineOption).
    static var options: [CommandLineOption<Self>] {
        [
            .option("socket", \.socket, valueName: "path", help: "Socket to bind when not socket-activated. Default: $SIGNUPD_SOCKET, $RUNTIME_DIRECTORY/signupd.sock, $XDG_RUNTIME_DIR/signupd.sock, or /run/signupd/signupd.sock for root. Its directory must exist and be safe (owned by root or you, not writable by others)."),
            .option("socket-mode", \.socketMode, valueName: "mode", help: "Permissions of a socket signupd binds itself, in octal."),
            .option("database", \.database, valueName: "path", help: "SQLite database of accounts, :memory: for a throwaway store, or postgresql://user@host:port/database?sslmode=… for a PostgreSQL database shared by several hosts (PGHOST, PGPORT, PGUSER, PGDATABASE, PGSSLMODE, PGSSLROOTCERT fill in what the URL leaves out). Default: $STATE_DIRECTORY/accounts.sqlite, or /var/lib/signupd/accounts.sqlite for root, ~/.local/state/signupd/accounts.sqlite otherwise (created 0700 when missing). A path given here must be in an existing, safe directory; its files are made 0600."),
        ]
    }

    var socket: String?
    var socketMode: String = "0660"
    var database: String?

    var socketModeValue: UInt32 { UInt32(socketMode, radix: 8) ?? 0o660 }

    func validate() throws {
        guard let mode = UInt32(socketMode, radix: 8), mode <= 0o777 else {
            throw UsageError("--socket-mode must be an octal mode such as 0660")
        }
        if let socket { try BindFailure.checkLength(socket, option: "--socket") }
        guard let database else { return }
        if PostgresURL.isPostgres(database) {
            // Read here too, so that a malformed URL is a usage error --check-config reports.
            do { _ = try PostgresURL(database, environment: DefaultPaths.environment) } catch { throw UsageError("--database: \(error)") }
        } else if let refusal = PostgresURL.refusalOfOtherURL(database) {
            throw UsageError(refusal)
        }
    }
}

/// The optional outside availability check.
struct AvailabilityOptions {
    /// Its options: names, help and the field each sets (CommandLineOption).
    static var options: [CommandLineOption<Self>] {
        [
            .option("availability-url", \.availabilityURL, valueName: "template", help: "HTTP service asked whether a name is free, e.g. http://127.0.0.1:8080/users/{key} or https://users.example.org/users/{key}: {username} is the name in NFC as typed, {key} its identity key (case-folded, NFKC); 404 means available, 2xx taken, anything else an error. https:// verifies the service's certificate for the URL's host against the system's trust store (or --availability-ca-file)."),
            .option("availability-ca-file", \.availabilityCAFile, valueName: "path", help: "With an https:// --availability-url: PEM file of the CA certificates the service's certificate must chain to, instead of the system's trust store (/etc/ssl/certs). Read once at start; under the packaged service keep it in /etc/signupd."),
            .option("availability-timeout", \.availabilityTimeout, valueName: "seconds", help: "Seconds an availability check may take before it counts as \"Error contacting server\". (default: \(seconds(DaemonTuning.standard.availabilityTimeout)))"),
        ]
    }

    var availabilityURL: String?
    var availabilityCAFile: String?
    var availabilityTimeout: Double?

    /// The timeout given, over the default.
    func apply(to tuning: inout DaemonTuning) {
        if let availabilityTimeout { tuning.availabilityTimeout = .milliseconds(Int64(availabilityTimeout * 1000)) }
    }

    func validate() throws {
        if let availabilityTimeout, !(availabilityTimeout > 0 && availabilityTimeout <= 60) {
            throw UsageError("--availability-timeout must be more than 0 and at most 60 seconds, not \(availabilityTimeout)")
        }
        if availabilityCAFile != nil, !(availabilityURL?.lowercased().hasPrefix("https://") ?? false) {
            throw UsageError("--availability-ca-file is for an https:// --availability-url")
        }
        if let availabilityURL {
            // A usage error (exit 64) that never repeats the URL: it may hold a password.
            do { _ = try AvailabilityURLTemplate(availabilityURL) } catch { throw UsageError("--availability-url: \(error)") }
        }
    }
}

/// Resource limits; each is announced or documented.
struct LimitOptions {
    /// Its options: names, help and the field each sets (CommandLineOption).
    static var options: [CommandLineOption<Self>] {
        [
            .option("max-line-bytes", \.maxLineBytes, valueName: "bytes", help: "Longest request line accepted, in bytes. (default: \(DaemonTuning.standard.limits.maxLineBytes))"),
            .option("max-connections", \.maxConnections, valueName: "n", help: "Connections served at once, in total. (default: \(DaemonTuning.standard.maxConnections))"),
            .option("max-connections-per-user", \.maxConnectionsPerUser, valueName: "n", help: "Connections served at once per peer uid (at most --max-connections; the default, a sixteenth of the total, leaves room for other users). (default: \(DaemonTuning.standard.maxConnectionsPerUID))"),
            .option("max-connects-per-user-per-second", \.maxConnectsPerUserPerSecond, valueName: "n", help: "New connections per peer uid per second (bursts of twice that); past it a connection is refused at once with rate_limited and bye. Root and the daemon's own uid are not limited (they can stop the daemon anyway); 0: no limit. (default: \(DaemonTuning.standard.connectsPerUIDPerSecond ?? 0))"),
            .option("idle-connection-timeout", \.idleConnectionTimeout, valueName: "seconds", help: "Seconds a connection holding no session may stay without a request before it is closed with bye; also how long any connection's pending answers may stay unread before it is closed as stuck (0: never either). (default: \(DaemonTuning.standard.idleConnectionSeconds ?? 0))"),
            .option("session-idle-timeout", \.sessionIdleTimeout, valueName: "seconds", help: "Seconds a session may go without a request before it is closed, with a closed event naming why, even while its connection lives (0: never). (default: \(DaemonTuning.standard.sessionIdleSeconds ?? 0))"),
            .option("availability-checks-per-second", \.availabilityChecksPerSecond, valueName: "n", help: "Username availability checks per peer uid per second, over all its sessions (bursts of twice that); past it checks are delayed, not refused. Raise it for a web bridge serving many people under one uid. (default: \(DaemonTuning.standard.availabilityChecksPerUIDPerSecond))"),
            .option("availability-checks-per-session-per-second", \.availabilityChecksPerSessionPerSecond, valueName: "n", help: "Username availability checks per session per second (bursts of twice that). (default: \(DaemonTuning.standard.availabilityChecksPerSessionPerSecond))"),
            .option("max-sessions-per-connection", \.maxSessionsPerConnection, valueName: "n", help: "Sessions one connection may hold. (default: \(DaemonTuning.standard.limits.maxSessionsPerConnection))"),
            .option("max-output-bytes", \.maxOutputBytes, valueName: "bytes", help: "Unread output buffered for a client before it is dropped as a slow consumer. (default: \(DaemonTuning.standard.limits.maxOutputBytes))"),
            .option("max-buffered-bytes", \.maxBufferedBytes, valueName: "bytes", help: "Memory held for all clients together: request bytes read but not handled yet (partial lines, lines waiting) plus answers not read yet. Past it, connections are closed with bye: the biggest of the uid (or person behind a front end) holding the most in all, again and again, until the total is three quarters of this or less; a uid holding under 4 KiB in all never is. --max-total-output-bytes is an older name. (default: \(DaemonTuning.standard.maxBufferedBytes))", alias: ["max-total-output-bytes"]),
            .option("max-expensive-requests-per-second", \.maxExpensiveRequestsPerSecond, valueName: "n", help: "open, attach, resume, submit, locale, describe, status and signups requests per connection per second, and sessions (one for each 100 sessions its page may hold); bursts of twice that. (default: \(DaemonTuning.standard.expensiveRequestsPerSecond))"),
            .option("max-token-checks-per-second", \.maxTokenChecksPerSecond, valueName: "n", help: "verify and logout requests per connection per second (bursts of twice that): a front end checks a token on every page it serves. (default: \(DaemonTuning.standard.tokenChecksPerSecond))"),
        ]
    }

    var maxLineBytes: Int?
    var maxConnections: Int?
    var maxConnectionsPerUser: Int?
    var maxConnectsPerUserPerSecond: Int?
    var idleConnectionTimeout: Int?
    var sessionIdleTimeout: Int?
    var availabilityChecksPerSecond: Int?
    var availabilityChecksPerSessionPerSecond: Int?
    var maxSessionsPerConnection: Int?
    var maxOutputBytes: Int?
    var maxBufferedBytes: Int?
    var maxExpensiveRequestsPerSecond: Int?
    var maxTokenChecksPerSecond: Int?

    /// The limits given, over the defaults (0 turns a rate or a timeout off).
    func apply(to tuning: inout DaemonTuning) {
        if let maxLineBytes { tuning.limits.maxLineBytes = maxLineBytes }
        if let maxSessionsPerConnection { tuning.limits.maxSessionsPerConnection = maxSessionsPerConnection }
        if let maxOutputBytes { tuning.limits.maxOutputBytes = maxOutputBytes }
        if let maxConnections { tuning.maxConnections = maxConnections }
        // Given, it must fit the total; not given, it follows a smaller total down, as its
        // help says: a sixteenth of it (helper-42: --max-connections 100 alone refused to start).
        if let maxConnectionsPerUser {
            tuning.maxConnectionsPerUID = maxConnectionsPerUser
        } else if let maxConnections {
            tuning.maxConnectionsPerUID = min(tuning.maxConnectionsPerUID, max(1, maxConnections / 16))
        }
        if let maxConnectsPerUserPerSecond { tuning.connectsPerUIDPerSecond = maxConnectsPerUserPerSecond == 0 ? nil : maxConnectsPerUserPerSecond }
        if let maxBufferedBytes { tuning.maxBufferedBytes = maxBufferedBytes }
        if let availabilityChecksPerSecond { tuning.availabilityChecksPerUIDPerSecond = availabilityChecksPerSecond }
        if let availabilityChecksPerSessionPerSecond { tuning.availabilityChecksPerSessionPerSecond = availabilityChecksPerSessionPerSecond }
        if let idleConnectionTimeout { tuning.idleConnectionSeconds = idleConnectionTimeout == 0 ? nil : idleConnectionTimeout }
        if let sessionIdleTimeout { tuning.sessionIdleSeconds = sessionIdleTimeout == 0 ? nil : sessionIdleTimeout }
        if let maxExpensiveRequestsPerSecond { tuning.expensiveRequestsPerSecond = maxExpensiveRequestsPerSecond }
        if let maxTokenChecksPerSecond { tuning.tokenChecksPerSecond = maxTokenChecksPerSecond }
    }

    func validate() throws {
        if let maxLineBytes { try checkRange("--max-line-bytes", maxLineBytes, 256...16_777_216) }
        if let maxConnections { try checkRange("--max-connections", maxConnections, 1...1_000_000) }
        if let maxConnectionsPerUser { try checkRange("--max-connections-per-user", maxConnectionsPerUser, 1...1_000_000) }
        var tuning = DaemonTuning()
        apply(to: &tuning)
        try checkPerUID("--max-connections-per-user", tuning.maxConnectionsPerUID, within: "--max-connections", tuning.maxConnections)
        if let maxConnectsPerUserPerSecond { try checkRange("--max-connects-per-user-per-second", maxConnectsPerUserPerSecond, 0...1_000_000) }
        if let availabilityChecksPerSecond { try checkRange("--availability-checks-per-second", availabilityChecksPerSecond, 1...1_000_000) }
        if let availabilityChecksPerSessionPerSecond {
            try checkRange("--availability-checks-per-session-per-second", availabilityChecksPerSessionPerSecond, 1...1_000_000)
        }
        if let idleConnectionTimeout { try checkRange("--idle-connection-timeout", idleConnectionTimeout, 0...86_400) }
        if let sessionIdleTimeout { try checkRange("--session-idle-timeout", sessionIdleTimeout, 0...604_800) }
        if let maxSessionsPerConnection { try checkRange("--max-sessions-per-connection", maxSessionsPerConnection, 1...1024) }
        if let maxOutputBytes { try checkRange("--max-output-bytes", maxOutputBytes, 4096...1_073_741_824) }
        if let maxBufferedBytes { try checkRange("--max-buffered-bytes", maxBufferedBytes, 65536...68_719_476_736) }
        if let maxExpensiveRequestsPerSecond { try checkRange("--max-expensive-requests-per-second", maxExpensiveRequestsPerSecond, 1...1_000_000) }
        if let maxTokenChecksPerSecond { try checkRange("--max-token-checks-per-second", maxTokenChecksPerSecond, 1...1_000_000) }
    }
}

/// Front ends that speak for their people (`client` op) and resuming sessions.
struct FrontEndOptions {
    /// Its options: names, help and the field each sets (CommandLineOption).
    static var options: [CommandLineOption<Self>] {
        [
            .option("trusted-bridge-group", \.trustedBridgeGroup, valueName: "group", help: "Group whose members are trusted front ends: they may name the end client each connection speaks for ({\"op\":\"client\"}), and every per-user limit then counts that client. The Debian package creates signupd-bridges (empty) and names it. Membership is the peer process's, primary or supplementary, when it connects."),
            .repeating("trusted-bridge-uid", \.trustedBridgeUid, valueName: "user", help: "A uid (or user name) trusted as a front end, like members of --trusted-bridge-group; may be repeated."),
            .option("max-connections-per-client", \.maxConnectionsPerClient, valueName: "n", help: "Connections one client of a trusted front end may hold. (default: \(DaemonTuning.standard.maxConnectionsPerClient))"),
            .option("max-connections-per-bridge", \.maxConnectionsPerBridge, valueName: "n", help: "Connections a trusted front end's uid may hold in all, for all its clients: its site-wide ceiling. (default: \(DaemonTuning.standard.maxConnectionsPerBridge))"),
            .option("resume-grace", \.resumeGrace, valueName: "seconds", help: "Seconds a session whose connection dropped is kept for {\"op\":\"resume\"} with the secret its opened event carried (0: it ends with its connection). (default: \(DaemonTuning.standard.resumeGraceSeconds ?? 0))"),
            .option("max-resumable-sessions-per-user", \.maxResumableSessionsPerUser, valueName: "n", help: "Sessions of one user (uid, or front-end client) waiting for resume at once; past it the oldest waiting one ends (closed: abandoned). (default: \(DaemonTuning.standard.maxResumableSessionsPerUser))"),
            .option("max-carried-connections", \.maxCarriedConnections, valueName: "n", help: "Connections carried across a restart (systemd's file descriptor store), all users together, 1 to 65536; signupd.service's FileDescriptorStoreMax= (4097) must be larger: raise it in the same drop-in. When they are all taken, a user holding fewer takes a place from the user holding the most (its least recently used connection), then a connection idle for \(DaemonTuning.standard.carryIdleSeconds / 60) minutes gives its place. (default: \(DaemonTuning.standard.maxCarriedConnections))"),
            .option("max-handover-bytes", \.maxHandoverBytes, valueName: "bytes", help: "Bytes the state handed to the next process at a restart may have (sessions and what carried connections have in flight), 1 MiB to 1 GiB - 1 MiB. Past it, each user keeps a fair share of its sessions and of its connections' bytes in flight; the other sessions end with a closed event, the other connections get bye restarted. (default: \(DaemonTuning.standard.maxHandoverBytes))"),
            .option("max-views-per-session", \.maxViewsPerSession, valueName: "n", help: "Connections that may attach to one session besides the one that opened it, 0 to 1024; an attach past it is refused (limit_exceeded). Every change of a session is written to each. (default: \(DaemonTuning.standard.maxViewsPerSession))"),
            .option("max-session-bytes", \.maxSessionBytes, valueName: "bytes", help: "Memory all sessions together may hold, 1 MiB to 64 GiB: 4 KiB for each session plus its values' bytes, reserved in 4 KiB steps. Each user (uid, or front end's client) may always hold 64 KiB and never more than half of this; past three quarters of it, a user over its equal share is refused new sessions and longer values (limit_exceeded), and everyone is at this limit. (default: \(DaemonTuning.standard.maxSessionBytes))"),
            .option("login-backstop-per-hour", \.loginBackstopPerHour, valueName: "n", help: "Failed logins for one name from all front-end clients together in an hour before clients that never logged in to that name are refused (clients that did keep their own allowance). (default: \(DaemonTuning.standard.loginBackstopPerHour))"),
        ]
    }

    var trustedBridgeGroup: String?
    var trustedBridgeUid: [String] = []
    var maxConnectionsPerClient: Int?
    var maxConnectionsPerBridge: Int?
    var resumeGrace: Int?
    var maxResumableSessionsPerUser: Int?
    var maxCarriedConnections: Int?
    var maxHandoverBytes: Int?
    var maxViewsPerSession: Int?
    var maxSessionBytes: Int?
    var loginBackstopPerHour: Int?

    func apply(to tuning: inout DaemonTuning) {
        if let maxConnectionsPerClient { tuning.maxConnectionsPerClient = maxConnectionsPerClient }
        if let maxConnectionsPerBridge { tuning.maxConnectionsPerBridge = maxConnectionsPerBridge }
        if let resumeGrace { tuning.resumeGraceSeconds = resumeGrace == 0 ? nil : resumeGrace }
        if let maxCarriedConnections { tuning.maxCarriedConnections = maxCarriedConnections }
        if let maxHandoverBytes { tuning.maxHandoverBytes = maxHandoverBytes }
        if let maxSessionBytes { tuning.maxSessionBytes = maxSessionBytes }
        if let maxViewsPerSession { tuning.maxViewsPerSession = maxViewsPerSession }
        if let loginBackstopPerHour { tuning.loginBackstopPerHour = loginBackstopPerHour }
        if let maxResumableSessionsPerUser { tuning.maxResumableSessionsPerUser = maxResumableSessionsPerUser }
    }

    /// The trusted uids and group, looked up in the system's user and group databases.
    func trustedBridges() throws -> TrustedBridges {
        var trusted = TrustedBridges()
        for user in trustedBridgeUid {
            guard let uid = UInt32(user) ?? SystemAccounts.uid(ofUser: user) else { throw UsageError("--trusted-bridge-uid: no user \"\(user)\"") }
            trusted.uids.insert(uid)
        }
        if let trustedBridgeGroup {
            guard let gid = UInt32(trustedBridgeGroup) ?? SystemAccounts.gid(ofGroup: trustedBridgeGroup) else {
                throw UsageError("--trusted-bridge-group: no group \"\(trustedBridgeGroup)\"")
            }
            guard gid != 0 else { throw UsageError("--trusted-bridge-group: group 0 (root) cannot be a group of front ends; make one, e.g. signupd-bridges") }
            trusted.gid = gid
        }
        return trusted
    }

    func validate() throws {
        // Looked up here too, so that an unknown group or user is a usage error (exit 64)
        // that --check-config reports, like --admin-group's (helper-42).
        _ = try trustedBridges()
        if let maxConnectionsPerClient { try checkRange("--max-connections-per-client", maxConnectionsPerClient, 1...1_000_000) }
        if let maxConnectionsPerBridge { try checkRange("--max-connections-per-bridge", maxConnectionsPerBridge, 1...1_000_000) }
        var tuning = DaemonTuning()
        apply(to: &tuning)
        try checkPerUID("--max-connections-per-client", tuning.maxConnectionsPerClient, within: "--max-connections-per-bridge", tuning.maxConnectionsPerBridge)
        if let resumeGrace { try checkRange("--resume-grace", resumeGrace, 0...3600) }
        if let maxCarriedConnections { try checkRange("--max-carried-connections", maxCarriedConnections, 1...65_536) }
        if let maxSessionBytes { try checkRange("--max-session-bytes", maxSessionBytes, 1_048_576...68_719_476_736) }
        if let maxViewsPerSession { try checkRange("--max-views-per-session", maxViewsPerSession, 0...1024) }
        if let maxHandoverBytes { try checkRange("--max-handover-bytes", maxHandoverBytes, 1_048_576...(HandoverCodec.maxReadBytes - 1_048_576)) }
        if let loginBackstopPerHour { try checkRange("--login-backstop-per-hour", loginBackstopPerHour, 1...1_000_000) }
        if let maxResumableSessionsPerUser { try checkRange("--max-resumable-sessions-per-user", maxResumableSessionsPerUser, 1...1_000_000) }
    }
}

/// Password hashing and login tokens.
struct SecurityOptions {
    /// Its options: names, help and the field each sets (CommandLineOption).
    static var options: [CommandLineOption<Self>] {
        [
            .option("argon2-ops", \.argon2Ops, valueName: "n", help: "Argon2id passes (default: libsodium's interactive profile, \(PasswordHasher.interactive.operations))."),
            .option("argon2-memory-kib", \.argon2MemoryKib, valueName: "kib", help: "Argon2id memory per hash in KiB (default: libsodium's interactive profile, \(PasswordHasher.interactive.memoryBytes / 1024))."),
            .option("hash-concurrency", \.hashConcurrency, valueName: "n", help: "Passwords hashed at once (default: the number of CPUs signupd may run on)."),
            .option("token-lifetime", \.tokenLifetime, valueName: "seconds", help: "Seconds a login token stays valid. (default: \(DaemonTuning.standard.tokenLifetimeSeconds))"),
            .option("login-attempts-per-minute", \.loginAttemptsPerMinute, valueName: "n", help: "Failed logins per username from one uid before its further attempts back off (1 minute, doubling, at most 1 hour). (default: \(DaemonTuning.standard.loginAttemptsPerMinute))"),
            .option("max-queued-hashes-per-user", \.maxQueuedHashesPerUser, valueName: "n", help: "Signups and logins queued or hashing at once for one peer uid; a submit past it is refused at once; the default, a quarter of --max-queued-hashes, leaves room for other users. (default: \(DaemonTuning.standard.maxQueuedHashesPerUID))"),
            .option("max-queued-hashes", \.maxQueuedHashes, valueName: "n", help: "Signups and logins queued or hashing at once in total. (default: \(DaemonTuning.standard.maxQueuedHashes))"),
        ]
    }

    var argon2Ops: UInt64?
    var argon2MemoryKib: Int?
    var hashConcurrency: Int?
    var tokenLifetime: Int?
    var loginAttemptsPerMinute: Int?
    var maxQueuedHashesPerUser: Int?
    var maxQueuedHashes: Int?

    /// The token and hashing limits given, over the defaults.
    func apply(to tuning: inout DaemonTuning) {
        if let tokenLifetime { tuning.tokenLifetimeSeconds = Int64(tokenLifetime) }
        if let loginAttemptsPerMinute { tuning.loginAttemptsPerMinute = loginAttemptsPerMinute }
        if let maxQueuedHashes { tuning.maxQueuedHashes = maxQueuedHashes }
        // Not given, it follows a smaller total down to a quarter of it, as the default does.
        if let maxQueuedHashesPerUser {
            tuning.maxQueuedHashesPerUID = maxQueuedHashesPerUser
        } else if let maxQueuedHashes {
            tuning.maxQueuedHashesPerUID = min(tuning.maxQueuedHashesPerUID, max(1, maxQueuedHashes / 4))
        }
    }

    var hashCost: DaemonConfiguration.HashCost {
        let interactive = PasswordHasher.interactive
        return .init(operations: argon2Ops ?? interactive.operations, memoryBytes: argon2MemoryKib.map { $0 * 1024 } ?? interactive.memoryBytes)
    }

    func validate() throws {
        if let argon2Ops { try checkRange("--argon2-ops", argon2Ops, 1...64) }
        if let argon2MemoryKib { try checkRange("--argon2-memory-kib", argon2MemoryKib, 8...4_194_304) }
        if let hashConcurrency { try checkRange("--hash-concurrency", hashConcurrency, 1...256) }
        if let tokenLifetime { try checkRange("--token-lifetime", tokenLifetime, 1...315_360_000) }
        if let loginAttemptsPerMinute { try checkRange("--login-attempts-per-minute", loginAttemptsPerMinute, 1...1000) }
        if let maxQueuedHashesPerUser { try checkRange("--max-queued-hashes-per-user", maxQueuedHashesPerUser, 1...100_000) }
        if let maxQueuedHashes { try checkRange("--max-queued-hashes", maxQueuedHashes, 1...1_000_000) }
        var tuning = DaemonTuning()
        apply(to: &tuning)
        try checkPerUID("--max-queued-hashes-per-user", tuning.maxQueuedHashesPerUID, within: "--max-queued-hashes", tuning.maxQueuedHashes)
    }
}

/// Refuses a per-uid limit above its total (either may be the default).
func checkPerUID(_ option: String, _ perUID: Int, within totalOption: String, _ total: Int) throws {
    guard perUID <= total else {
        throw UsageError("\(option) \(perUID) is more than \(totalOption) \(total); a per-uid limit cannot exceed the total")
    }
}

/// A duration as `--help` shows it, in seconds.
func seconds(_ duration: Duration) -> String {
    let (whole, attoseconds) = duration.components
    return attoseconds == 0 ? "\(whole)" : "\(Double(whole) + Double(attoseconds) / 1e18)"
}

/// Refuses a numeric option outside `range` with a message naming both.
func checkRange<T: BinaryInteger>(_ option: String, _ value: T, _ range: ClosedRange<T>) throws {
    guard range.contains(value) else {
        throw UsageError("\(option) must be between \(range.lowerBound) and \(range.upperBound), not \(value)")
    }
}

/// Operator forms and message catalogues.
struct FormOptions {
    /// Its options: names, help and the field each sets (CommandLineOption).
    static var options: [CommandLineOption<Self>] {
        [
            .option("forms-dir", \.formsDir, valueName: "dir", help: "Directory of operator form definitions (*.form, read in name order); a form named like a built-in one replaces it. Default: /etc/signupd/forms.d (may be absent)."),
            .option("messages-dir", \.messagesDir, valueName: "dir", help: "Directory of message catalogues (LOCALE.messages) adding languages or replacing texts. Default: /etc/signupd/messages.d (may be absent)."),
            .flag("check-config", \.checkConfig, help: "Read the forms and catalogues, report every problem as file:line:column (the first of each field or key; warnings once there are no errors), and exit: 0 when valid, 1 otherwise. Run by root, the files are judged for the user the service runs as (that of --check-config-of, else signupd). Starts nothing."),
            .option("check-config-of", \.checkConfigOf, valueName: "pid", help: "With --check-config: check the forms and catalogues the running signupd with this process id reads (its --forms-dir and --messages-dir, from /proc/PID/cmdline), not this command line's, for the user it runs as. The packaged unit's ExecReload passes $MAINPID, so that a reload is checked against what the service runs with."),
        ]
    }

    var formsDir: String?
    var messagesDir: String?
    var checkConfig = false
    var checkConfigOf: Int?

    /// The directories `--check-config` reads: this command line's, or, with
    /// `--check-config-of PID`, those of the running signupd's command line.
    func checkedDirectories() throws -> FormDirectories {
        guard let pid = checkConfigOf else { return directories }
        let path = "/proc/\(pid)/cmdline"
        guard let bytes = UnixIO.readToEnd(path) else {
            throw DaemonError.startup("--check-config-of \(pid): cannot read \(path): \(UnixIO.errnoText()); is signupd running with that process id?")
        }
        let arguments = bytes.split(separator: 0, omittingEmptySubsequences: false).dropFirst().map { String(decoding: $0, as: UTF8.self) }
        let isSignupd = bytes.split(separator: 0).first.map { String(decoding: $0, as: UTF8.self).hasSuffix("signupd") } ?? false
        guard isSignupd, case .run(let running)? = try? SignupDaemonCommand.parse(arguments.last == "" ? Array(arguments.dropLast()) : arguments) else {
            throw DaemonError.startup("--check-config-of \(pid): process \(pid) is not a signupd serving forms")
        }
        // A relative --forms-dir is the running process's, from its working directory.
        var directories = running.forms.directories
        let cwd = UnixIO.readLink("/proc/\(pid)/cwd")
        if let cwd {
            if !directories.forms.hasPrefix("/") { directories.forms = cwd + "/" + directories.forms }
            if !directories.messages.hasPrefix("/") { directories.messages = cwd + "/" + directories.messages }
        }
        return directories
    }

    var directories: FormDirectories {
        FormDirectories(
            forms: formsDir ?? FormDirectories.defaultForms,
            messages: messagesDir ?? FormDirectories.defaultMessages,
            formsRequired: formsDir != nil,
            messagesRequired: messagesDir != nil
        )
    }
}

/// `print(..., to:)` on standard error.
struct StandardError: TextOutputStream {
    mutating func write(_ string: String) {
        UnixIO.writeAll(2, Array(string.utf8))
    }
}
