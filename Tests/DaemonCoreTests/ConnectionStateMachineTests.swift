import Testing
@testable import SignupDaemonCore

/// The connection's lifecycle as plain values, every transition and refusal (the pipeline:
/// ConnectionPipelineTests; every state × event pair: ConnectionStateTableTests).
@Suite struct ConnectionStateMachineTests {
    private func admitted() -> ConnectionStateMachine {
        var lifecycle = ConnectionStateMachine()
        #expect(lifecycle.admission(.admitted, uid: 7, maxConnections: 10, maxConnectionsPerUID: 2, connectsPerUIDPerSecond: 5) == .greet)
        return lifecycle
    }

    @Test func anAdmittedConnectionReadsUntilItsInputCloses() {
        var lifecycle = admitted()
        #expect(lifecycle.lifecycle == .open && lifecycle.readsRequests)
        #expect(lifecycle.inputClosed() == .finishInput)
        #expect(lifecycle.lifecycle == .draining && !lifecycle.readsRequests)
        #expect(lifecycle.inputClosed() == .none)
    }

    /// Every close the daemon decides goes through `end`: once, with its words, and it
    /// stops the reading of requests; a failed channel closes without words in any state.
    @Test func theDaemonEndsAConnectionOnceWithItsReason() {
        var lifecycle = admitted()
        #expect(lifecycle.end(.idle(seconds: 600)) == .sayBye("idle: no request for 600 seconds"))
        #expect(lifecycle.lifecycle == .closing && !lifecycle.readsRequests)
        // A second reason (the shutdown, a displacement) finds it ending already.
        #expect(lifecycle.end(.shutdown("the server is shutting down")) == .none)
        #expect(lifecycle.end(.failed) == .close)
        #expect(lifecycle.inactive() == .release(deregister: true))
        #expect(lifecycle.end(.stuck(seconds: 1)) == .none)

        var draining = admitted()
        #expect(draining.inputClosed() == .finishInput)
        #expect(draining.end(.overBudget(limit: 100, held: 60))
            == .sayBye("over budget: the buffers of all clients passed 100 bytes and this connection held 60 of them"))

        var refused = ConnectionStateMachine()
        _ = refused.admission(.draining, uid: 7, maxConnections: 10, maxConnectionsPerUID: 2, connectsPerUIDPerSecond: 5)
        #expect(refused.end(.displaced(maxConnections: 10, peer: 7, held: 3)) == .none)
        #expect(refused.end(.failed) == .close)
    }

    @Test func anAdoptedConnectionIsOpenAndCountsInTheRegistry() {
        // A connection carried over from the previous process (issue 16): no admission.
        var lifecycle = ConnectionStateMachine()
        lifecycle.adopted(pending: [])
        #expect(lifecycle.resume() == .drain)
        #expect(lifecycle.lifecycle == .open && lifecycle.readsRequests)
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
        var lifecycle = ConnectionStateMachine()
        #expect(lifecycle.admission(answer, uid: 7, maxConnections: 10, maxConnectionsPerUID: 2, connectsPerUIDPerSecond: 5) == .refuse(failure))
        #expect(lifecycle.lifecycle == .refused && !lifecycle.readsRequests)
        #expect(lifecycle.inputClosed() == .none)
        // A refused connection never counted in the registry.
        #expect(lifecycle.inactive() == .release(deregister: false))
    }

    @Test func aDrainingConnectionClosesOnlyWhenAllWorkIsDone() {
        var lifecycle = admitted()
        // Open: done or not, it stays.
        #expect(lifecycle.progressed(sessionsBusy: false) == .none)
        lifecycle.received(.line(Array("{}".utf8)))
        _ = lifecycle.inputClosed()
        // A line buffered.
        #expect(lifecycle.progressed(sessionsBusy: false) == .none)
        #expect(lifecycle.nextFrame() == .line(Array("{}".utf8)))
        // An answer awaited.
        lifecycle.awaitReply()
        #expect(lifecycle.progressed(sessionsBusy: false) == .none)
        #expect(lifecycle.replied() == .drain)
        #expect(lifecycle.drainEnded(outputFull: false) == .checkDone)
        // A session busy.
        #expect(lifecycle.progressed(sessionsBusy: true) == .none)
        #expect(lifecycle.progressed(sessionsBusy: false) == .close)
        #expect(lifecycle.lifecycle == .closing)
        // Asked once: later progress does not close again.
        #expect(lifecycle.progressed(sessionsBusy: false) == .none)
        #expect(lifecycle.inactive() == .release(deregister: true))
        #expect(lifecycle.lifecycle == .closed)
    }

    @Test func aClientWhoseWriteFailedHasItsInputDropped() {
        var lifecycle = admitted()
        lifecycle.received(.line(Array("{}".utf8)))
        #expect(lifecycle.writeFailed() == .dropInput)
        #expect(!lifecycle.hasBacklog && lifecycle.backlogBytes == 0)
        #expect(lifecycle.lifecycle == .closing && !lifecycle.readsRequests)
        #expect(lifecycle.writeFailed() == .none)
        // Still counted until the channel goes.
        #expect(lifecycle.inactive() == .release(deregister: true))
        var refused = ConnectionStateMachine()
        _ = refused.admission(.draining, uid: 7, maxConnections: 10, maxConnectionsPerUID: 2, connectsPerUIDPerSecond: 5)
        #expect(refused.writeFailed() == .none && refused.lifecycle == .refused)
    }

    @Test func anOpenConnectionLeavesTheRegistryWhenInactive() {
        var lifecycle = admitted()
        #expect(lifecycle.inactive() == .release(deregister: true))
    }
}
