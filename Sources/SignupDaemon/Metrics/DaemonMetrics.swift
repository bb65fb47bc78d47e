import CoreMetrics
import FormEngine
import NIOConcurrencyHelpers
import NIOCore
import Prometheus
import SignupProtocol

/// What operators scrape (issue 26): every metric the daemon exposes, by name, with its help
/// text and labels, in this one place. Recorded through swift-metrics' types; kept in a
/// Prometheus registry of the daemon's own (never the process-wide bootstrap, so that tests
/// run many daemons in one process). README "Metrics" lists them for operators.
///
/// Counters and histograms count from the process's start; Prometheus' `rate()` and
/// `increase()` handle the reset at each start (idle exit, restart).
final class DaemonMetrics: Sendable {
    let registry: PrometheusCollectorRegistry
    private let factory: PrometheusMetricsFactory

    /// One series per label set, made on first use and kept (the label values are the
    /// forms' names and fixed words, so the set is small and bounded).
    private let counters = NIOLockedValueBox<[String: CoreMetrics.Counter]>([:])
    private let timers = NIOLockedValueBox<[String: CoreMetrics.Timer]>([:])
    private let gauges = NIOLockedValueBox<[String: CoreMetrics.Meter]>([:])
    /// `signupd_validation_seconds`, observed on every `set`: kept per event loop, outside
    /// the registry (`LoopHistogram`), and added to what it renders (`exposition`).
    private let validationSeconds = LoopHistogram(name: Name.validation, help: help[Name.validation] ?? "", labelName: "form", buckets: buckets(Name.validation))

    init(version: String) {
        registry = PrometheusCollectorRegistry()
        factory = PrometheusMetricsFactory(registry: registry)
        gauge(Name.up).set(1)
        gauge(Name.buildInfo, ["version": version]).set(1)
        gauge(Name.startTime).set(Double(wallClockSeconds()))
        gauge(Name.signupsPaused).set(0)
        // Before a restore sets them (`carried`); `prepare` comes later.
        gauge(Name.carriedSessions).set(0)
        gauge(Name.handoverSeconds).set(0)
    }

    /// Makes every series a scrape should find from the start at zero (a dashboard's
    /// `rate()` and an alert's comparison need the series before its first event): the
    /// outcomes of each form's action, its validation histogram, and the fixed label sets.
    func prepare(forms: [(name: String, action: SubmitAction)]) {
        for form in forms {
            validationSeconds.prepare(form.name)
            let outcomes: [SubmitOutcome] = form.action == .signup
                ? [.signedUp(user: ""), .usernameTaken, .usernameTooSimilar, .rateLimited, .storeUnavailable, .signupsPaused(note: nil)]
                : [.loggedIn(user: "", token: ""), .invalidCredentials, .rateLimited, .storeUnavailable]
            for outcome in outcomes {
                _ = counter(form.action == .signup ? Name.signups : Name.logins, ["form": form.name, "outcome": Self.label(outcome)])
            }
        }
        for outcome in [LogoutOutcome.revoked, .unknown, .unavailable] { _ = counter(Name.logouts, ["outcome": outcome.rawValue]) }
        for result in [Availability.available, .taken, .tooSimilar, .unreachable] { _ = counter(Name.availabilityChecks, ["result": Self.label(result)]) }
        _ = timer(Name.availabilitySeconds)
        _ = timer(Name.hashSeconds)
        // helper-46: the store's histogram appeared only with its first call of each kind.
        for operation in StoreOperation.allCases { _ = timer(Name.storeSeconds, ["operation": operation.rawValue]) }
        _ = counter(Name.logLinesSummarised)
        for code in ErrorCode.allCases { _ = counter(Name.refusals, ["code": code.rawValue]) }
        for reason in ["client", "idle", "stuck", "over_budget", "slow_consumer", "displaced", "refused", "refused_client", "shutdown", "failed"] {
            _ = counter(Name.closes, ["reason": reason])
        }
    }

    // MARK: Recording

    /// A signup or login ended (`action` of the form `form`) with `outcome`.
    func submitted(_ action: SubmitAction, form: String, outcome: SubmitOutcome) {
        counter(action == .signup ? Name.signups : Name.logins, ["form": form, "outcome": Self.label(outcome)]).increment()
    }

    func loggedOut(_ outcome: LogoutOutcome) {
        counter(Name.logouts, ["outcome": outcome.rawValue]).increment()
    }

    /// The `set`-to-events histogram of one form as `loop` records it: a session fetches
    /// its own once, at open.
    func validation(form: String, on loop: EventLoop) -> LoopHistogram.Shard {
        validationSeconds.shard(form, on: loop)
    }

    /// Everything a scrape shows, in Prometheus' text format: the registry's families, then
    /// the ones kept outside it.
    func exposition() -> [UInt8] {
        var text = registry.emitToBuffer()
        validationSeconds.emit(into: &text)
        return text
    }

    func availabilityChecked(_ result: Availability, seconds nanoseconds: Int64) {
        timer(Name.availabilitySeconds).recordNanoseconds(nanoseconds)
        counter(Name.availabilityChecks, ["result": Self.label(result)]).increment()
    }

    func store(_ operation: StoreOperation, nanoseconds: Int64) {
        timer(Name.storeSeconds, ["operation": operation.rawValue]).recordNanoseconds(nanoseconds)
    }

    func hashed(nanoseconds: Int64) {
        timer(Name.hashSeconds).recordNanoseconds(nanoseconds)
    }

    /// A request or connection refused with `code` (its `error` event's).
    func refused(_ code: String) {
        counter(Name.refusals, ["code": code]).increment()
    }

    /// A connection ended; `reason` is `ConnectionEnding.metricLabel` or `client`.
    func connectionClosed(_ reason: String) {
        counter(Name.closes, ["reason": reason]).increment()
    }

    /// What the last start carried over from the previous process, and how long it took.
    func carried(sessions: Int, seconds: Double) {
        gauge(Name.carriedSessions).set(sessions)
        gauge(Name.handoverSeconds).set(seconds)
    }

    func signupsPaused(_ paused: Bool) {
        gauge(Name.signupsPaused).set(paused ? 1 : 0)
    }

    /// Log lines left out because the same event repeated (`LogSummary`).
    func logLinesSummarised(_ count: Int) {
        counter(Name.logLinesSummarised).increment(by: count)
    }

    /// The gauges read at scrape time, not kept up to date on the hot path.
    struct Levels {
        var connections: Int
        var sessions: Int
        var detachedSessions: Int
        var hashQueueDepth: Int
        /// What all connections buffer now, and the budget on it (`--max-buffered-bytes`).
        var bufferedBytes: Int
        var bufferBudget: Int
    }

    func sample(_ levels: Levels) {
        gauge(Name.connections).set(levels.connections)
        gauge(Name.sessions).set(levels.sessions)
        gauge(Name.detachedSessions).set(levels.detachedSessions)
        gauge(Name.hashQueueDepth).set(levels.hashQueueDepth)
        gauge(Name.bufferedBytes).set(levels.bufferedBytes)
        gauge(Name.bufferBudget).set(levels.bufferBudget)
    }

    // MARK: Names, help and buckets: the one place

    enum Name {
        static let signups = "signupd_signups_total"
        static let logins = "signupd_logins_total"
        static let logouts = "signupd_logouts_total"
        static let validation = "signupd_validation_seconds"
        static let availabilitySeconds = "signupd_availability_check_seconds"
        static let availabilityChecks = "signupd_availability_checks_total"
        static let storeSeconds = "signupd_store_seconds"
        static let hashSeconds = "signupd_hash_seconds"
        static let hashQueueDepth = "signupd_hash_queue_depth"
        static let bufferedBytes = "signupd_buffered_bytes"
        static let bufferBudget = "signupd_buffered_bytes_budget"
        static let connections = "signupd_connections"
        static let sessions = "signupd_sessions"
        static let detachedSessions = "signupd_detached_sessions"
        static let refusals = "signupd_refusals_total"
        static let closes = "signupd_connection_closes_total"
        static let carriedSessions = "signupd_carried_sessions"
        static let handoverSeconds = "signupd_handover_seconds"
        static let up = "signupd_up"
        static let buildInfo = "signupd_build_info"
        static let startTime = "signupd_start_time_seconds"
        static let signupsPaused = "signupd_signups_paused"
        static let logLinesSummarised = "signupd_log_lines_summarised_total"
    }

    static let help: [String: String] = [
        Name.signups: "Signups ended, by form and outcome (ok, taken, too_similar, throttled, unavailable, paused).",
        Name.logins: "Logins ended, by form and outcome (ok, failed, throttled, unavailable).",
        Name.logouts: "Logout requests, by outcome (revoked, unknown, unavailable).",
        Name.validation: "Time from a set request to its events being queued for the client, per form.",
        Name.availabilitySeconds: "Time an availability check took (store, then the availability service if configured).",
        Name.availabilityChecks: "Availability checks answered, by result (available, taken, too_similar, unreachable).",
        Name.storeSeconds: "Time an account store call took, by operation.",
        Name.hashSeconds: "Time one password hash or verification took on the hash pool.",
        Name.hashQueueDepth: "Signups and logins queued or running on the hash pool.",
        Name.bufferedBytes: "Bytes all connections hold now: requests read but not handled yet and answers not read yet.",
        Name.bufferBudget: "The budget on signupd_buffered_bytes (--max-buffered-bytes); past it the biggest holders are closed.",
        Name.connections: "Client connections open.",
        Name.sessions: "Form sessions open (detached ones included).",
        Name.detachedSessions: "Sessions whose connection dropped, waiting for resume.",
        Name.refusals: "Requests and connections refused, by error code.",
        Name.closes: "Connections ended, by reason (client: the client closed it).",
        Name.carriedSessions: "Sessions this process took over from the previous one at its start.",
        Name.handoverSeconds: "Seconds this process took to restore what the previous one handed over.",
        Name.up: "1 while signupd serves.",
        Name.buildInfo: "signupd's version, as a label; always 1.",
        Name.startTime: "When this process started, in seconds since the Unix epoch.",
        Name.signupsPaused: "1 while sign-up is paused (signupctl signups pause).",
        Name.logLinesSummarised: "Log lines left out because one peer repeated the same event (a summary line counts them).",
    ]

    /// Histogram buckets, by metric.
    static func buckets(_ name: String) -> [Duration] {
        switch name {
        case Name.validation:
            // Past 100 ms too (helper-47: a slower set counted only in +Inf, and status's p99
            // could not read above 100 ms), without the gap at 50 ms.
            [.microseconds(25), .microseconds(50), .microseconds(100), .microseconds(250), .microseconds(500),
             .milliseconds(1), .milliseconds(2.5), .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50),
             .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1)]
        case Name.hashSeconds:
            [.milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250),
             .milliseconds(500), .seconds(1), .seconds(2.5), .seconds(5), .seconds(10)]
        default:
            [.microseconds(100), .microseconds(250), .microseconds(500), .milliseconds(1), .milliseconds(2.5),
             .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100),
             .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2.5), .seconds(5), .seconds(10)]
        }
    }

    static func label(_ outcome: SubmitOutcome) -> String {
        switch outcome {
        case .signedUp, .loggedIn: "ok"
        case .usernameTaken: "taken"
        case .usernameTooSimilar: "too_similar"
        case .invalidCredentials: "failed"
        case .rateLimited: "throttled"
        case .storeUnavailable: "unavailable"
        case .signupsPaused: "paused"
        }
    }

    static func label(_ availability: Availability) -> String {
        switch availability {
        case .available: "available"
        case .taken: "taken"
        case .tooSimilar: "too_similar"
        case .unreachable: "unreachable"
        }
    }

    // MARK: Series

    /// The full name as is (no namespace or unit parts to join) and its help text.
    private static func descriptor(_ name: String) -> MetricNameDescriptor {
        MetricNameDescriptor(metricName: name, unitName: "", helpText: help[name] ?? "")
    }

    private func counter(_ name: String, _ labels: KeyValuePairs<String, String> = [:]) -> CoreMetrics.Counter {
        series(counters, name, labels) { pairs in
            CoreMetrics.Counter(label: name, dimensions: pairs, handler: registry.makeCounter(descriptor: Self.descriptor(name), labels: pairs), factory: factory)
        }
    }

    private func timer(_ name: String, _ labels: KeyValuePairs<String, String> = [:]) -> CoreMetrics.Timer {
        series(timers, name, labels) { pairs in
            let histogram = registry.makeDurationHistogram(descriptor: Self.descriptor(name), labels: pairs, buckets: Self.buckets(name))
            return CoreMetrics.Timer(label: name, dimensions: pairs, handler: histogram, factory: factory)
        }
    }

    private func gauge(_ name: String, _ labels: KeyValuePairs<String, String> = [:]) -> CoreMetrics.Meter {
        series(gauges, name, labels) { pairs in
            CoreMetrics.Meter(label: name, dimensions: pairs, handler: registry.makeGauge(descriptor: Self.descriptor(name), labels: pairs), factory: factory)
        }
    }

    /// The series of `name` with `labels` in `table`, made by `make` the first time.
    private func series<Series>(
        _ table: NIOLockedValueBox<[String: Series]>, _ name: String, _ labels: KeyValuePairs<String, String>, make: ([(String, String)]) -> Series
    ) -> Series {
        table.withLockedValue { table in
            let key = labels.reduce(name) { "\($0)\u{0}\($1.key)=\($1.value)" }
            if let existing = table[key] { return existing }
            let made = make(labels.map { ($0.key, $0.value) })
            table[key] = made
            return made
        }
    }
}

/// What became of a `logout`, for `signupd_logouts_total`.
enum LogoutOutcome: String, Sendable {
    case revoked, unknown, unavailable
}

/// An account store call, for `signupd_store_seconds`.
enum StoreOperation: String, Sendable, CaseIterable {
    case availability, createAccount = "create_account", account, updatePasswordHash = "update_password_hash"
    case storeToken = "store_token", tokenOwner = "token_owner", revokeToken = "revoke_token"
    case deleteExpiredTokens = "delete_expired_tokens"
}
