import FormEngine
import NIOCore
import UsernameIdentity

/// What a session's effects are performed with.
struct SessionServices: Sendable {
    let accounts: AccountService
    let http: HTTPAvailabilityClient?
    let formConfiguration: FormConfiguration
    let registry: ConnectionRegistry
    let directory: SessionDirectory
    /// Availability answers per uid and per session.
    let checkBudget: CheckBudget

    /// The engine's clock: NIO's monotonic uptime.
    static func now() -> Moment {
        Moment(nanoseconds: Int64(NIODeadline.now().uptimeNanoseconds))
    }

    /// The full availability check: the store first, then the HTTP service if configured.
    /// A cancelled check skips what has not started and aborts its HTTP request.
    func availability(of username: String, cancellation: CheckCancellation, on eventLoop: EventLoop) -> EventLoopFuture<Availability> {
        let fromStore = accounts.storeAvailability(of: username, on: eventLoop)
        guard let http else { return fromStore }
        // The service is asked about the name as it would be stored and shown: NFC.
        let display = (try? Usernames.identity(of: username).get())?.display ?? username
        return fromStore.flatMap { availability in
            guard availability == .available, !cancellation.isCancelled else { return eventLoop.makeSucceededFuture(availability) }
            return http.check(display, cancellation: cancellation, on: eventLoop)
        }
    }
}
