import NIOCore

/// The shutdown drain in one place: no new sessions or submits from `begin` on; signups
/// and logins already accepted finish and are answered, within the grace period counted
/// from `begin`; then every connection gets `bye`, and `finish` returns once all have closed.
/// A restart's handover (Handover/HandoverCoordinator) drains the same way up to the `bye`.
struct ShutdownDrain {
    let registry: ConnectionRegistry
    /// How long accepted signups and logins may still take.
    let grace: TimeAmount

    /// Stops taking work and starts the grace period on `loop`'s clock.
    func begin(on loop: EventLoop) -> Started {
        registry.beginDraining()
        let registry = registry
        return Started(registry: registry, deadline: loop.scheduleTask(in: grace) { registry.abandonSubmitWait() })
    }

    /// A drain under way.
    struct Started: Sendable {
        let registry: ConnectionRegistry
        let deadline: Scheduled<Void>

        /// Waits for the accepted signups and logins (or the end of the grace period). A
        /// handover (issue 16) stops here: the connections go to the next process, no `bye`.
        func finishWork() async {
            await registry.waitForSubmits()
            deadline.cancel()
        }

        /// Waits for the submits (or the end of the grace period), says `bye` with `reason`
        /// to every connection, and returns once all are gone.
        func finish(reason: String) async {
            await finishWork()
            for output in registry.allConnections { output.end(.shutdown(reason)) }
            await registry.waitForConnections()
        }
    }
}
