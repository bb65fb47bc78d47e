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

    /// The engine's clock: NIO's monotonic uptime.
    static func now() -> Moment {
        Moment(nanoseconds: Int64(NIODeadline.now().uptimeNanoseconds))
    }

    /// The full availability check: the store first, then the HTTP service if configured.
    func availability(of username: String, on eventLoop: EventLoop) -> EventLoopFuture<Availability> {
        let fromStore = accounts.storeAvailability(of: username, on: eventLoop)
        guard let http else { return fromStore }
        // The service is asked about the name as it would be stored and shown (NFC) and/or
        // its identity key, as the URL template says. The store only answers "available"
        // for a name the rule accepts, so the identity exists whenever the service is asked.
        guard let identity = try? Usernames.identity(of: username).get() else { return fromStore }
        return fromStore.flatMap { availability in
            availability == .available
                ? http.check(username: identity.display, key: identity.key, on: eventLoop) : eventLoop.makeSucceededFuture(availability)
        }
    }
}
