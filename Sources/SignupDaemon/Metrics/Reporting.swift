import Logging
import NIOCore
import SignupProtocol

/// What operators see of what happens (issue 26): the metrics and the log lines, which name
/// who and are summarised when one peer repeats itself. Refusals and the daemon's own closes
/// are mapped to both here, in one place.
struct Reporting: Sendable {
    let metrics: DaemonMetrics
    let log: LogSummary

    /// A request or connection refused: counted by code; logged (summarised) with who and
    /// the session — protective refusals (limits, rates, trust, tokens) as notices, the
    /// client's own mistakes at debug.
    func refused(_ failure: RequestFailure, principal: Principal, pid: Int32?) {
        let code = failure.code
        metrics.refused(code.rawValue)
        // A flood of refusals below the log level costs no metadata.
        guard log.logs(Self.level(of: code)) else { return }
        var fields = principal.metadata
        fields["code"] = code.rawValue
        if let session = failure.session { fields["session"] = session.loggable }
        fields["reason"] = failure.message
        // One tally per kind of refusal, not per code: a flood of one kind must not hide
        // another (a peer's `sessions` with `all` and its attempts on someone's session are
        // both `forbidden`).
        log.log(Self.level(of: code), "refused: \(code.rawValue) (\(failure.kind))", peer: principal.key, metadata: principal.logMetadata(pid: pid, fields))
    }

    static func level(of code: ErrorCode) -> Logger.Level {
        switch code {
        case .rateLimited, .limitExceeded, .forbidden, .invalidToken, .lineTooLong: .notice
        default: .debug
        }
    }

    /// The daemon ended a connection (or its client did: `ending` nil).
    func closed(_ ending: ConnectionEnding?) {
        metrics.connectionClosed(ending?.metricLabel ?? "client")
    }
}

extension ConnectionEnding {
    /// `signupd_connection_closes_total{reason}`.
    var metricLabel: String {
        switch self {
        case .idle: "idle"
        case .stuck: "stuck"
        case .overBudget: "over_budget"
        case .slowConsumer: "slow_consumer"
        case .displaced: "displaced"
        case .refusedClient: "refused_client"
        case .shutdown: "shutdown"
        case .failed: "failed"
        }
    }
}
