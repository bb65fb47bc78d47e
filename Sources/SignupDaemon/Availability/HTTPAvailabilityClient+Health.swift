import Logging

extension HTTPAvailabilityClient {
    /// The service as the log names it: scheme, host and port (the path may hold a key).
    var serviceName: String { "\(template.isHTTPS ? "https" : "http")://\(template.hostHeader)" }

    var timeoutText: String {
        let milliseconds = timeout.nanoseconds / 1_000_000
        return milliseconds % 1000 == 0 ? "\(milliseconds / 1000)" : "\(Double(milliseconds) / 1000)"
    }

    func report(_ action: AvailabilityServiceHealth.Action) {
        switch action {
        case .none: break
        case .logUnreachable(let cause):
            logger.warning("availability service unreachable: username checks answer \"Error contacting server\" until it answers again", metadata: ["service": "\(serviceName)", "cause": "\(cause)"])
        case .logCauseChanged(let cause, let was):
            logger.warning("availability service still unreachable, for another reason", metadata: ["service": "\(serviceName)", "cause": "\(cause)", "was": "\(was)"])
        case .logAnswering(let cause):
            logger.notice("availability service answers again", metadata: ["service": "\(serviceName)", "wasUnreachable": "\(cause)"])
        case .logIntermittent(let cause):
            logger.warning("availability service answers some checks and not others: failures and recoveries in the next minute are not logged one by one", metadata: ["service": "\(serviceName)", "cause": "\(cause)"])
        }
    }
}
