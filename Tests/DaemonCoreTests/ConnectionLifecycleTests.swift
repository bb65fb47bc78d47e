import Testing
@testable import SignupDaemonCore

/// The connection lifecycle as plain values, every transition and refusal.
@Suite struct ConnectionLifecycleTests {
    private func admitted() -> ConnectionLifecycle {
        var lifecycle = ConnectionLifecycle()
        #expect(lifecycle.admission(.admitted, uid: 7, maxConnections: 10, maxConnectionsPerUID: 2, connectsPerUIDPerSecond: 5) == .greet)
        return lifecycle
    }

    @Test func anAdmittedConnectionReadsUntilItsInputCloses() {
        var lifecycle = admitted()
        #expect(lifecycle.state == .open && lifecycle.readsRequests)
        #expect(lifecycle.inputClosed() == .finishInput)
        #expect(lifecycle.state == .draining && !lifecycle.readsRequests)
        #expect(lifecycle.inputClosed() == .none)
    }

    /// Every close the daemon decides goes through `end`: once, with its words, and it
    /// stops the reading of requests; a failed channel closes without words in any state.
    @Test func theDaemonEndsAConnectionOnceWithItsReason() {
        var lifecycle = admitted()
        #expect(lifecycle.end(.idle(seconds: 600)) == .sayBye("idle: no request for 600 seconds"))
        #expect(lifecycle.state == .closing && !lifecycle.readsRequests)
        // A second reason (the shutdown, a displacement) finds it ending already.
        #expect(lifecycle.end(.shutdown("the server is shutting down")) == .none)
        #expect(lifecycle.end(.failed) == .close)
        #expect(lifecycle.inactive() == .release(deregister: true))
        #expect(lifecycle.end(.stuck(seconds: 1)) == .none)

        var draining = admitted()
        #expect(draining.inputClosed() == .finishInput)
        #expect(draining.end(.overBudget(limit: 100, held: 60))
            == .sayBye("over budget: the buffers of all clients passed 100 bytes and this connection held 60 of them"))

        var refused = ConnectionLifecycle()
        _ = refused.admission(.draining, uid: 7, maxConnections: 10, maxConnectionsPerUID: 2, connectsPerUIDPerSecond: 5)
        #expect(refused.end(.displaced(maxConnections: 10, uid: 7, held: 3)) == .none)
        #expect(refused.end(.failed) == .close)
    }

    @Test func anAdoptedConnectionIsOpenAndCountsInTheRegistry() {
        // A connection carried over from the previous process (issue 16): no admission.
        var lifecycle = ConnectionLifecycle()
        lifecycle.adopted()
        #expect(lifecycle.state == .open && lifecycle.readsRequests)
        #expect(lifecycle.inputClosed() == .finishInput)
        #expect(lifecycle.inactive() == .release(deregister: true))
    }

    @Test(arguments: [
        (ConnectionRegistry.Admission.tooManyConnections, RequestFailure.tooManyConnections(limit: 10)),
        (.tooManyForUser, .tooManyConnectionsForUser(uid: 7, limit: 2)),
        (.connectingTooFast, .connectingTooFast(uid: 7, perSecond: 5)),
        (.draining, .draining),
    ])
    func refusalsNameTheirLimit(answer: ConnectionRegistry.Admission, failure: RequestFailure) {
        var lifecycle = ConnectionLifecycle()
        #expect(lifecycle.admission(answer, uid: 7, maxConnections: 10, maxConnectionsPerUID: 2, connectsPerUIDPerSecond: 5) == .refuse(failure))
        #expect(lifecycle.state == .refused && !lifecycle.readsRequests)
        #expect(lifecycle.inputClosed() == .none)
        // A refused connection never counted in the registry.
        #expect(lifecycle.inactive() == .release(deregister: false))
    }

    @Test func aDrainingConnectionClosesOnlyWhenAllWorkIsDone() {
        var lifecycle = admitted()
        let idle = ConnectionLifecycle.Work(requestsBuffered: false, awaitingReply: false, sessionsBusy: false)
        // Open: done or not, it stays.
        #expect(lifecycle.progressed(idle) == .none)
        _ = lifecycle.inputClosed()
        for busy in [
            ConnectionLifecycle.Work(requestsBuffered: true, awaitingReply: false, sessionsBusy: false),
            .init(requestsBuffered: false, awaitingReply: true, sessionsBusy: false),
            .init(requestsBuffered: false, awaitingReply: false, sessionsBusy: true),
        ] {
            #expect(lifecycle.progressed(busy) == .none)
        }
        #expect(lifecycle.progressed(idle) == .close)
        #expect(lifecycle.state == .closing)
        // Asked once: later progress does not close again.
        #expect(lifecycle.progressed(idle) == .none)
        #expect(lifecycle.inactive() == .release(deregister: true))
        #expect(lifecycle.state == .closed)
    }

    @Test func aClientWhoseWriteFailedHasItsInputDropped() {
        var lifecycle = admitted()
        #expect(lifecycle.writeFailed() == .dropInput)
        #expect(lifecycle.state == .closing && !lifecycle.readsRequests)
        #expect(lifecycle.writeFailed() == .none)
        // Still counted until the channel goes.
        #expect(lifecycle.inactive() == .release(deregister: true))
        var refused = ConnectionLifecycle()
        _ = refused.admission(.draining, uid: 7, maxConnections: 10, maxConnectionsPerUID: 2, connectsPerUIDPerSecond: 5)
        #expect(refused.writeFailed() == .none && refused.state == .refused)
    }

    @Test func anOpenConnectionLeavesTheRegistryWhenInactive() {
        var lifecycle = admitted()
        #expect(lifecycle.inactive() == .release(deregister: true))
    }
}
