import FormEngine
import Logging

extension HTTPAvailabilityClient {
    /// The service as the log names it: scheme, host and port (the path may hold a key).
    var serviceName: String { "\(template.isHTTPS ? "https" : "http")://\(template.hostHeader)" }

    var timeoutText: String {
        let milliseconds = timeout.nanoseconds / 1_000_000
        return milliseconds % 1000 == 0 ? "\(milliseconds / 1000)" : "\(Double(milliseconds) / 1000)"
    }

    /// What the session is told of a check's outcome; the service's health is updated with
    /// it, and a change logged once.
    func availability(of outcome: Outcome, cancellation: CheckCancellation) -> Availability {
        switch outcome {
        case .answered(let availability):
            report(health.withLockedValue { $0.answered(at: .now()) })
            return availability
        case .failed(let failure):
            // A superseded check did not fail: it was no longer wanted. One the session
            // gave up waiting for did (the session's timeout and this one are the same).
            if !cancellation.isCancelled || cancellation.timedOut, let cause = serviceCause(failure) {
                report(health.withLockedValue { $0.failed(cause, at: .now()) })
            }
            return .unreachable
        }
    }

    /// The service's part in a failure, in words for the log; nil when it had none: waiting
    /// for a connection is congestion here, and signupd stopping is signupd's doing.
    private func serviceCause(_ failure: AvailabilityCheckFailure) -> String? {
        switch failure {
        case .stopping, .busy: nil
        case .noAnswer: "no answer within \(timeoutText) s"
        case .service(let cause): cause
        }
    }

    private func report(_ action: AvailabilityServiceHealth.Action) {
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
