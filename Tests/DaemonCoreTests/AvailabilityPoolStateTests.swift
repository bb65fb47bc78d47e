import NIOCore
import Testing
@testable import SignupDaemonCore

/// The availability client's pool as plain values: every event in the states it can meet,
/// and the I/O it asks for. No channel, no event loop, no clock: connections, checks and
/// timers are numbers. The same rules against a real socket: `AvailabilityPoolTests`.
@Suite struct AvailabilityPoolStateTests {
    private struct Check: AvailabilityPoolCheck, Equatable {
        let id: UInt64
        let uid: UInt32
        var peer: PeerKey { PeerKey(uid: uid) }
    }

    /// A connection, numbered like the pool's connection ids.
    private struct Connection: Hashable, Sendable {
        let id: Int
        init(_ id: Int) { self.id = id }
    }

    /// An idle timer, numbered like the stay it was armed for.
    private struct Timer: Hashable, Sendable {
        let park: UInt64
    }

    private typealias Pool = AvailabilityPoolState<Connection, Check, Timer>

    /// A pool, the connections that closed behind its back, and the time.
    private struct Harness {
        var pool: Pool
        var dead: Set<Connection> = []
        var now = NIODeadline.uptimeNanoseconds(1_000_000_000)

        init(maxConnections: Int = 4, perUID: Int = 2) {
            pool = Pool(maxConnections: maxConnections, maxConnectionsPerUID: perUID, failFastPeriod: .seconds(1))
        }

        mutating func check(_ uid: UInt32) -> Check {
            guard case .admitted(let id) = pool.admit(now: now) else {
                Issue.record("a check of uid \(uid) was not admitted")
                return Check(id: 0, uid: uid)
            }
            return Check(id: id, uid: uid)
        }

        mutating func lease(_ check: Check) -> [Pool.Action] {
            let dead = dead
            return pool.lease(check) { !dead.contains($0) }
        }

        /// A new check of `uid` on a new plain connection, which must be connection `id`.
        mutating func sent(_ uid: UInt32, on id: Int) -> Check {
            let check = check(uid)
            #expect(lease(check) == [.connect(id)])
            #expect(pool.connected(id, Connection(id), handshake: false) == [.send(check, id, Connection(id))])
            return check
        }

        /// `check` on connection `id` answered: the connection is parked and its timer armed.
        mutating func answered(_ check: Check, on id: Int) -> Pool.IdleTimer {
            pool.checkFinished(check.id)
            let actions = pool.connectionFreed(id, reusable: true)
            guard case .scheduleIdleTimer(let key, Connection(id)) = actions.first, actions.count == 1 else {
                Issue.record("connection \(id) was not parked: \(actions)")
                return Pool.IdleTimer(connection: id, park: 0)
            }
            #expect(key.connection == id)
            #expect(pool.idleTimerScheduled(key, Timer(park: key.park)) == [])
            return key
        }
    }

    // MARK: - Admission and fail-fast

    @Test func checksAreNumberedAndAFailedConnectTurnsNewOnesAwayForASecond() {
        var harness = Harness()
        #expect(harness.pool.admit(now: harness.now) == .admitted(checkID: 1))
        #expect(harness.pool.admit(now: harness.now) == .admitted(checkID: 2))
        let check = Check(id: 2, uid: 7)
        #expect(harness.lease(check) == [.connect(1)])
        #expect(harness.pool.connectFailed(1, cause: "connection refused", now: harness.now) == [.fail(check, .service("connection refused"))])
        #expect(harness.pool.openConnections == 0 && harness.pool.connections(heldBy: 7) == 0)
        // One attempt a second, not one per keystroke.
        #expect(harness.pool.admit(now: harness.now + .milliseconds(999)) == .failingFast)
        #expect(harness.pool.admit(now: harness.now + .seconds(1)) == .admitted(checkID: 3))
    }

    @Test func aConnectionMadeEndsTheFailFastAtOnce() {
        var harness = Harness()
        let first = harness.check(7)
        let second = harness.check(8)
        #expect(harness.lease(first) == [.connect(1)])
        #expect(harness.lease(second) == [.connect(2)])
        #expect(harness.pool.connectFailed(1, cause: "connection refused", now: harness.now) == [.fail(first, .service("connection refused"))])
        #expect(harness.pool.admit(now: harness.now) == .failingFast)
        // An attempt made before the failure succeeds: the service is there after all.
        #expect(harness.pool.connected(2, Connection(2), handshake: false) == [.send(second, 2, Connection(2))])
        #expect(harness.pool.admit(now: harness.now) == .admitted(checkID: 3))
    }

    // MARK: - Leasing

    @Test func aCheckOpensAConnectionAndTheNextReusesItOnceAnswered() {
        var harness = Harness()
        let first = harness.sent(7, on: 1)
        #expect(harness.pool.openConnections == 1 && harness.pool.connections(heldBy: 7) == 1)
        let parked = harness.answered(first, on: 1)
        #expect(parked == Pool.IdleTimer(connection: 1, park: 1))
        #expect(harness.pool.idleConnections == 1 && harness.pool.connections(heldBy: 7) == 0)
        let second = harness.check(8)
        #expect(harness.lease(second) == [.cancelTimer(Timer(park: 1)), .send(second, 1, Connection(1))])
        #expect(harness.pool.openConnections == 1 && harness.pool.idleConnections == 0)
    }

    @Test func theMostRecentlyParkedConnectionIsTakenFirst() {
        var harness = Harness()
        let first = harness.sent(7, on: 1)
        let second = harness.sent(8, on: 2)
        _ = harness.answered(first, on: 1)
        _ = harness.answered(second, on: 2)
        let third = harness.check(9)
        #expect(harness.lease(third) == [.cancelTimer(Timer(park: 2)), .send(third, 2, Connection(2))])
    }

    @Test func anIdleConnectionThatClosedUnseenIsSkippedAndForgottenWhenItsCloseIsReported() {
        var harness = Harness(maxConnections: 2)
        let first = harness.sent(7, on: 1)
        let second = harness.sent(8, on: 2)
        _ = harness.answered(first, on: 1)
        _ = harness.answered(second, on: 2)
        harness.dead = [Connection(2)]
        let third = harness.check(9)
        #expect(harness.lease(third) == [.cancelTimer(Timer(park: 2)), .cancelTimer(Timer(park: 1)), .send(third, 1, Connection(1))])
        // Still counted until its close is reported; then its slot is free.
        #expect(harness.pool.openConnections == 2)
        #expect(harness.pool.closed(2) == [])
        #expect(harness.pool.openConnections == 1)
        // All idle ones dead, room left: a new connection.
        let fourth = harness.check(9)
        #expect(harness.lease(fourth) == [.connect(3)])
    }

    @Test func withNoRoomLeftACheckWaits() {
        var harness = Harness(maxConnections: 2)
        _ = harness.sent(7, on: 1)
        _ = harness.sent(8, on: 2)
        let third = harness.check(9)
        #expect(harness.lease(third) == [])
        #expect(harness.pool.waitingChecks == 1 && harness.pool.openConnections == 2 && harness.pool.connections(heldBy: 9) == 0)
    }

    @Test func aUIDHoldingItsHalfWaitsEvenBesideAnIdleConnectionWhileOthersGetOne() {
        var harness = Harness(maxConnections: 4, perUID: 2)
        let a1 = harness.sent(7, on: 1)
        _ = harness.sent(7, on: 2)
        let other = harness.sent(8, on: 3)
        _ = harness.answered(other, on: 3)
        let a3 = harness.check(7)
        #expect(harness.lease(a3) == [])
        #expect(harness.pool.waitingChecks == 1 && harness.pool.idleConnections == 1)
        let b = harness.check(8)
        #expect(harness.lease(b) == [.cancelTimer(Timer(park: 1)), .send(b, 3, Connection(3))])
        // uid 7's own connection, once free, is its waiting check's.
        harness.pool.checkFinished(a1.id)
        #expect(harness.pool.connectionFreed(1, reusable: true) == [.send(a3, 1, Connection(1))])
        #expect(harness.pool.connections(heldBy: 7) == 2 && harness.pool.waitingChecks == 0)
    }

    // MARK: - Fairness

    @Test func aFreedConnectionGoesToTheUIDUsingTheFewestTheEarliestFirst() {
        var harness = Harness(maxConnections: 3, perUID: 2)
        let a1 = harness.sent(7, on: 1)
        let a2 = harness.sent(7, on: 2)
        _ = harness.sent(8, on: 3)
        // The pool full, uid 7 at its cap: everyone waits.
        let a3 = harness.check(7)
        let b2 = harness.check(8)
        let c1 = harness.check(9)
        for check in [a3, b2, c1] { #expect(harness.lease(check) == []) }
        // uid 9 uses none: its check goes ahead of the earlier ones of uids using one each.
        harness.pool.checkFinished(a1.id)
        #expect(harness.pool.connectionFreed(1, reusable: true) == [.send(c1, 1, Connection(1))])
        // uids 7 and 8 use one each: the earlier check, uid 7's.
        harness.pool.checkFinished(c1.id)
        #expect(harness.pool.connectionFreed(1, reusable: true) == [.send(a3, 1, Connection(1))])
        // uid 7 at its cap again; uid 8 below it.
        harness.pool.checkFinished(a2.id)
        #expect(harness.pool.connectionFreed(2, reusable: true) == [.send(b2, 2, Connection(2))])
        #expect(harness.pool.waitingChecks == 0)
        #expect(harness.pool.connections(heldBy: 7) == 1 && harness.pool.connections(heldBy: 8) == 2 && harness.pool.connections(heldBy: 9) == 0)
    }

    @Test func aFreedConnectionNoWaitingCheckMayTakeIsParked() {
        var harness = Harness(maxConnections: 3, perUID: 1)
        let a1 = harness.sent(7, on: 1)
        let b1 = harness.sent(8, on: 2)
        let a2 = harness.check(7)
        #expect(harness.lease(a2) == [])
        // uid 8's connection: uid 7 still holds its one, so its check keeps waiting.
        harness.pool.checkFinished(b1.id)
        #expect(harness.pool.connectionFreed(2, reusable: true) == [.scheduleIdleTimer(Pool.IdleTimer(connection: 2, park: 1), Connection(2))])
        harness.pool.checkFinished(a1.id)
        #expect(harness.pool.connectionFreed(1, reusable: true) == [.send(a2, 1, Connection(1))])
    }

    // MARK: - Connections ending

    @Test func aConnectionNotReusableClosesAndItsSlotGoesToAWaitingCheck() {
        var harness = Harness(maxConnections: 1)
        let first = harness.sent(7, on: 1)
        let second = harness.check(8)
        #expect(harness.lease(second) == [])
        harness.pool.checkFinished(first.id)
        #expect(harness.pool.connectionFreed(1, reusable: false) == [.close(Connection(1))])
        #expect(harness.pool.openConnections == 1)
        // The slot passes on: a new connection for the waiting check, the count unchanged.
        #expect(harness.pool.closed(1) == [.connect(2)])
        #expect(harness.pool.openConnections == 1 && harness.pool.waitingChecks == 0 && harness.pool.connections(heldBy: 8) == 1)
        #expect(harness.pool.connected(2, Connection(2), handshake: false) == [.send(second, 2, Connection(2))])
        // Nobody waiting: the slot is free.
        harness.pool.checkFinished(second.id)
        #expect(harness.pool.connectionFreed(2, reusable: false) == [.close(Connection(2))])
        #expect(harness.pool.closed(2) == [])
        #expect(harness.pool.openConnections == 0)
        // Reported twice, or a connection the pool never had: nothing.
        #expect(harness.pool.closed(2) == [])
        #expect(harness.pool.connectionFreed(2, reusable: true) == [])
    }

    @Test func theServiceClosingABusyConnectionFreesItsSlotAndTheCheckEndsOnItsOwn() {
        var harness = Harness(maxConnections: 1)
        let first = harness.sent(7, on: 1)
        let second = harness.check(8)
        #expect(harness.lease(second) == [])
        #expect(harness.pool.closed(1) == [.connect(2)])
        // The check on it ends (its request failed): nothing left to free.
        harness.pool.checkFinished(first.id)
        #expect(harness.pool.connectionFreed(1, reusable: false) == [])
        #expect(harness.pool.connections(heldBy: 7) == 0 && harness.pool.connections(heldBy: 8) == 1)
    }

    @Test func aClosedIdleConnectionDisarmsItsTimer() {
        var harness = Harness()
        let first = harness.sent(7, on: 1)
        _ = harness.answered(first, on: 1)
        #expect(harness.pool.closed(1) == [.cancelTimer(Timer(park: 1))])
        #expect(harness.pool.idleConnections == 0 && harness.pool.openConnections == 0)
    }

    @Test func anIdleConnectionClosesWhenItsTimerFiresButNotForAnEarlierStay() {
        var harness = Harness()
        let first = harness.sent(7, on: 1)
        let stay1 = harness.answered(first, on: 1)
        let second = harness.check(7)
        #expect(harness.lease(second) == [.cancelTimer(Timer(park: 1)), .send(second, 1, Connection(1))])
        let stay2 = harness.answered(second, on: 1)
        // The first stay's timer fired before its cancellation took: it closes nothing.
        #expect(harness.pool.idleTimerFired(stay1) == [])
        #expect(harness.pool.idleTimerFired(stay2) == [.close(Connection(1))])
        #expect(harness.pool.idleConnections == 0 && harness.pool.openConnections == 1)
        #expect(harness.pool.idleTimerFired(stay2) == [])
        #expect(harness.pool.closed(1) == [])
        #expect(harness.pool.openConnections == 0)
    }

    @Test func aTimerArmedTooLateIsDisarmedAtOnce() {
        var harness = Harness()
        let first = harness.sent(7, on: 1)
        harness.pool.checkFinished(first.id)
        #expect(harness.pool.connectionFreed(1, reusable: true) == [.scheduleIdleTimer(Pool.IdleTimer(connection: 1, park: 1), Connection(1))])
        // Lent again before the timer was reported: no timer to cancel yet, then that one.
        let second = harness.check(7)
        #expect(harness.lease(second) == [.send(second, 1, Connection(1))])
        #expect(harness.pool.idleTimerScheduled(Pool.IdleTimer(connection: 1, park: 1), Timer(park: 1)) == [.cancelTimer(Timer(park: 1))])
        // A timer reported twice for one stay: the second is not wanted.
        _ = harness.answered(second, on: 1)
        #expect(harness.pool.idleTimerScheduled(Pool.IdleTimer(connection: 1, park: 2), Timer(park: 99)) == [.cancelTimer(Timer(park: 99))])
    }

    // MARK: - Connection attempts

    @Test func aFailedAttemptFailsItsCheckAndPassesTheSlotToAWaitingCheck() {
        var harness = Harness(maxConnections: 1)
        let first = harness.check(7)
        let second = harness.check(8)
        #expect(harness.lease(first) == [.connect(1)])
        #expect(harness.lease(second) == [])
        #expect(harness.pool.connectFailed(1, cause: "connection refused", now: harness.now) == [.connect(2), .fail(first, .service("connection refused"))])
        #expect(harness.pool.openConnections == 1 && harness.pool.connections(heldBy: 7) == 0 && harness.pool.connections(heldBy: 8) == 1)
        // Reported twice, or for a connection that is open: nothing.
        #expect(harness.pool.connectFailed(1, cause: "connection refused", now: harness.now) == [])
    }

    /// The failed check's uid share comes back before the slot passes on: that uid's own
    /// waiting check takes it (before the pool was a value it waited out its timeout with
    /// the pool empty).
    @Test func theSlotOfAFailedAttemptGoesToItsOwnUIDsWaitingCheck() {
        var harness = Harness(maxConnections: 2, perUID: 1)
        let a1 = harness.check(7)
        let a2 = harness.check(7)
        #expect(harness.lease(a1) == [.connect(1)])
        #expect(harness.lease(a2) == [])
        #expect(harness.pool.connectFailed(1, cause: "connection refused", now: harness.now) == [.connect(2), .fail(a1, .service("connection refused"))])
        #expect(harness.pool.waitingChecks == 0 && harness.pool.openConnections == 1 && harness.pool.connections(heldBy: 7) == 1)
    }

    @Test func aTLSConnectionCarriesItsCheckOnlyOnceTheHandshakeSucceeded() {
        var harness = Harness()
        let check = harness.check(7)
        #expect(harness.lease(check) == [.connect(1)])
        #expect(harness.pool.connected(1, Connection(1), handshake: true) == [.awaitHandshake(1, Connection(1))])
        #expect(harness.pool.handshakeSucceeded(1) == [.send(check, 1, Connection(1))])
        #expect(harness.pool.handshakeSucceeded(1) == [])
        #expect(harness.pool.handshakeFailed(1, cause: "late") == [])
    }

    @Test func aFailedHandshakeClosesTheConnectionAndFailsItsCheckWithTheReason() {
        var harness = Harness(maxConnections: 1)
        let check = harness.check(7)
        let waiting = harness.check(8)
        #expect(harness.lease(check) == [.connect(1)])
        #expect(harness.lease(waiting) == [])
        #expect(harness.pool.connected(1, Connection(1), handshake: true) == [.awaitHandshake(1, Connection(1))])
        let cause = "the service's certificate does not name h"
        #expect(harness.pool.handshakeFailed(1, cause: cause) == [.close(Connection(1)), .fail(check, .service(cause))])
        #expect(harness.pool.connections(heldBy: 7) == 0)
        #expect(harness.pool.closed(1) == [.connect(2)])
    }

    @Test func aCloseReportedBeforeTheHandshakesFailureFailsTheCheckOnce() {
        var harness = Harness()
        let check = harness.check(7)
        #expect(harness.lease(check) == [.connect(1)])
        _ = harness.pool.connected(1, Connection(1), handshake: true)
        #expect(harness.pool.closed(1) == [.fail(check, .service("the service closed the connection during the TLS handshake"))])
        #expect(harness.pool.connections(heldBy: 7) == 0 && harness.pool.openConnections == 0)
        #expect(harness.pool.handshakeFailed(1, cause: "closed") == [])
    }

    @Test func reportsForAConnectionNotMadeYetOrUnknownAskForNothingOrItsClose() {
        var harness = Harness()
        let check = harness.check(7)
        #expect(harness.lease(check) == [.connect(1)])
        #expect(harness.pool.closed(1) == [])
        #expect(harness.pool.handshakeSucceeded(1) == [])
        #expect(harness.pool.connectionFreed(1, reusable: true) == [])
        #expect(harness.pool.openConnections == 1)
        // A connection the pool did not ask for is not kept.
        #expect(harness.pool.connected(9, Connection(9), handshake: false) == [.close(Connection(9))])
    }

    // MARK: - Cancellation and timeouts

    @Test func aCancelledWaitingCheckLeavesTheQueue() {
        var harness = Harness(maxConnections: 1)
        let first = harness.sent(7, on: 1)
        let second = harness.check(8)
        #expect(harness.lease(second) == [])
        #expect(harness.pool.cancelWaiting(second.id) == [.fail(second, .busy)])
        #expect(harness.pool.waitingChecks == 0)
        #expect(harness.pool.cancelWaiting(second.id) == [])
        // One holding a connection aborts its request itself: the pool has nothing to do.
        #expect(harness.pool.cancelWaiting(first.id) == [])
        harness.pool.checkFinished(first.id)
        #expect(harness.pool.connectionFreed(1, reusable: true) == [.scheduleIdleTimer(Pool.IdleTimer(connection: 1, park: 1), Connection(1))])
    }

    @Test func aTimedOutCheckWaitedForAConnectionOrForTheServicesAnswer() {
        var harness = Harness(maxConnections: 1)
        let connecting = harness.check(7)
        let waiting = harness.check(8)
        #expect(harness.lease(connecting) == [.connect(1)])
        #expect(harness.lease(waiting) == [])
        #expect(harness.pool.deadlinePassed(waiting.id) == [.fail(waiting, .busy)])
        #expect(harness.pool.waitingChecks == 0)
        // Lent a connection: no answer in time; it keeps its share until it has finished.
        #expect(harness.pool.deadlinePassed(connecting.id) == [.fail(connecting, .noAnswer)])
        #expect(harness.pool.connections(heldBy: 7) == 1)
        // The connection comes late: the request is sent all the same, then it finishes.
        #expect(harness.pool.connected(1, Connection(1), handshake: false) == [.send(connecting, 1, Connection(1))])
        harness.pool.checkFinished(connecting.id)
        harness.pool.checkFinished(connecting.id)
        #expect(harness.pool.connections(heldBy: 7) == 0)
        #expect(harness.pool.deadlinePassed(connecting.id) == [])
    }

    // MARK: - Shutdown

    @Test func shutdownEndsTheWaitingChecksAndClosesEveryOpenConnection() {
        // One connection in each state: busy, handshaking, idle, being opened; two checks waiting.
        var harness = Harness(maxConnections: 4, perUID: 1)
        let busy = harness.sent(7, on: 1)
        let handshaking = harness.check(8)
        #expect(harness.lease(handshaking) == [.connect(2)])
        #expect(harness.pool.connected(2, Connection(2), handshake: true) == [.awaitHandshake(2, Connection(2))])
        let parked = harness.sent(9, on: 3)
        let attempt = harness.check(11)
        #expect(harness.lease(attempt) == [.connect(4)])
        _ = harness.answered(parked, on: 3)
        let waiting1 = harness.check(8)
        let waiting2 = harness.check(7)
        #expect(harness.lease(waiting1) == [])
        #expect(harness.lease(waiting2) == [])

        #expect(
            harness.pool.shutdown() == [
                .cancelTimer(Timer(park: 1)), .fail(waiting1, .stopping), .fail(waiting2, .stopping),
                .close(Connection(1)), .close(Connection(2)), .close(Connection(3)),
            ])
        #expect(harness.pool.waitingChecks == 0 && harness.pool.idleConnections == 0)
        // Nothing new: no check, no connection, no slot passed on.
        #expect(harness.pool.admit(now: harness.now) == .stopping)
        #expect(harness.lease(Check(id: 99, uid: 12)) == [.fail(Check(id: 99, uid: 12), .stopping)])
        harness.pool.checkFinished(busy.id)
        #expect(harness.pool.connectionFreed(1, reusable: true) == [.close(Connection(1))])
        #expect(harness.pool.closed(1) == [])
        // The handshake under way: its check ends as stopping, not sent on a connection the
        // stop closed (it failed as the service's before, logging the service unreachable).
        #expect(harness.pool.handshakeSucceeded(2) == [.fail(handshaking, .stopping)])
        // The attempt under way: closed when made, its check ended by the stop.
        #expect(harness.pool.connected(4, Connection(4), handshake: false) == [.close(Connection(4)), .fail(attempt, .stopping)])
        #expect(harness.pool.connections(heldBy: 11) == 0)
        // A second shutdown closes what has not reported its close yet.
        #expect(harness.pool.shutdown() == [.close(Connection(2)), .close(Connection(3)), .close(Connection(4))])
    }

    @Test func anAttemptFailingAfterShutdownFailsItsCheckAndPassesNoSlot() {
        var harness = Harness(maxConnections: 1)
        let check = harness.check(7)
        let waiting = harness.check(8)
        #expect(harness.lease(check) == [.connect(1)])
        #expect(harness.lease(waiting) == [])
        #expect(harness.pool.shutdown() == [.fail(waiting, .stopping)])
        #expect(harness.pool.connectFailed(1, cause: "connection refused", now: harness.now) == [.fail(check, .service("connection refused"))])
        #expect(harness.pool.openConnections == 0)
        #expect(harness.pool.admit(now: harness.now + .seconds(5)) == .stopping)
    }

    // MARK: - Any order

    /// The I/O the pool asked for, performed in a random order as the network might, with
    /// the reports the client makes: whatever the order, the caps hold, a connection carries
    /// one check at a time, every check ends, and after the shutdown nothing is left open,
    /// held or armed.
    @Test(arguments: 0..<40)
    func anyOrderOfEventsKeepsTheCapsAndEndsEveryCheck(seed: UInt64) {
        var random = SplitMix(seed: seed)
        var harness = Harness(maxConnections: 3, perUID: 2)
        var world = World()
        for step in 0..<400 {
            harness.now = harness.now + .milliseconds(100)
            if step == 300 { world.perform(harness.pool.shutdown()) }
            switch random.next() % 12 {
            case 0, 1:
                guard case .admitted(let id) = harness.pool.admit(now: harness.now) else { break }
                let check = Check(id: id, uid: UInt32(random.next() % 4))
                world.checks.append(check.id)
                world.perform(harness.lease(check))
            case 2:
                guard let id = random.pick(world.connecting) else { break }
                world.connecting.remove(id)
                if random.next() % 8 == 0 {
                    world.perform(harness.pool.connectFailed(id, cause: "connection refused", now: harness.now))
                } else {
                    world.perform(harness.pool.connected(id, Connection(id), handshake: random.next() % 2 == 0))
                }
            case 3:
                guard let id = random.pick(world.handshaking) else { break }
                world.handshaking.remove(id)
                world.perform(random.next() % 4 == 0 ? harness.pool.handshakeFailed(id, cause: "bad certificate") : harness.pool.handshakeSucceeded(id))
            case 4, 5, 6:
                // A request in flight ends: answered (kept alive or not), or failed.
                guard let check = random.pick(Set(world.carrying.keys)) else { break }
                world.finish(check, reusable: random.next() % 3 != 0, in: &harness)
            case 7:
                guard !world.checks.isEmpty else { break }
                let check = world.checks[Int(random.next() % UInt64(world.checks.count))]
                world.perform(random.next() % 2 == 0 ? harness.pool.deadlinePassed(check) : harness.pool.cancelWaiting(check))
            case 8:
                guard let key = world.unarmed.popLast() else { break }
                world.armed.insert(key)
                world.perform(harness.pool.idleTimerScheduled(key, Timer(park: key.park)))
            case 9:
                guard let park = random.pick(Set(world.armed.map(\.park))), let key = world.armed.first(where: { $0.park == park }) else { break }
                world.armed.remove(key)
                world.perform(harness.pool.idleTimerFired(key))
            case 10:
                guard let id = random.pick(world.closing) else { break }
                world.close(id, in: &harness)
            default:
                // A connection closes behind the pool's back (the service, a middlebox).
                guard let id = random.pick(world.opened.subtracting(world.closing)) else { break }
                harness.dead.insert(Connection(id))
                world.closing.insert(id)
            }
            #expect(harness.pool.openConnections <= 3)
            for uid in UInt32(0)..<4 { #expect(harness.pool.connections(heldBy: PeerKey(uid: uid)) <= 2) }
            // A check whose outcome is known while its request is out ends at once.
            for (check, _) in world.carrying where world.failed.contains(check) { world.finish(check, reusable: false, in: &harness) }
        }
        // What is still under way ends: attempts, handshakes, requests, timers, closes.
        while !(world.connecting.isEmpty && world.handshaking.isEmpty && world.carrying.isEmpty && world.unarmed.isEmpty && world.closing.isEmpty) {
            for id in world.connecting.sorted() { world.perform(harness.pool.connectFailed(id, cause: "gone", now: harness.now)) }
            world.connecting = []
            for id in world.handshaking.sorted() { world.perform(harness.pool.handshakeFailed(id, cause: "closed")) }
            world.handshaking = []
            for check in world.carrying.keys.sorted() { world.finish(check, reusable: true, in: &harness) }
            while let key = world.unarmed.popLast() {
                world.armed.insert(key)
                world.perform(harness.pool.idleTimerScheduled(key, Timer(park: key.park)))
            }
            for id in world.closing.sorted() { world.close(id, in: &harness) }
        }
        #expect(harness.pool.openConnections == 0 && harness.pool.waitingChecks == 0 && harness.pool.idleConnections == 0)
        for uid in UInt32(0)..<4 { #expect(harness.pool.connections(heldBy: PeerKey(uid: uid)) == 0) }
        let unended = Set(world.checks).subtracting(world.failed).subtracting(world.ended)
        #expect(unended.isEmpty, "checks that never ended: \(unended.sorted())")
        #expect(world.armed.isEmpty, "idle timers left armed: \(world.armed)")
    }

    /// The network and the client around the pool in `anyOrderOfEventsKeepsTheCapsAndEndsEveryCheck`.
    private struct World {
        var checks: [UInt64] = []
        /// Checks the pool failed, and checks whose request ended.
        var failed: Set<UInt64> = []
        var ended: Set<UInt64> = []
        var connecting: Set<Int> = []
        var handshaking: Set<Int> = []
        var opened: Set<Int> = []
        var closing: Set<Int> = []
        var closed: Set<Int> = []
        /// Checks whose request is out, and on which connection.
        var carrying: [UInt64: Int] = [:]
        var unarmed: [Pool.IdleTimer] = []
        var armed: Set<Pool.IdleTimer> = []

        mutating func perform(_ actions: [Pool.Action]) {
            for action in actions {
                switch action {
                case .connect(let id):
                    #expect(!connecting.contains(id) && !opened.contains(id) && !closed.contains(id))
                    connecting.insert(id)
                case .awaitHandshake(let id, let connection):
                    #expect(connection.id == id)
                    opened.insert(id)
                    handshaking.insert(id)
                case .send(let check, let id, let connection):
                    #expect(connection.id == id && carrying[check.id] == nil && !ended.contains(check.id))
                    #expect(!carrying.values.contains(id), "connection \(id) carries one check at a time")
                    opened.insert(id)
                    carrying[check.id] = id
                case .fail(let check, _):
                    failed.insert(check.id)
                case .close(let connection):
                    if !closed.contains(connection.id) { closing.insert(connection.id) }
                case .scheduleIdleTimer(let key, let connection):
                    #expect(key.connection == connection.id)
                    unarmed.append(key)
                case .cancelTimer(let timer):
                    armed = armed.filter { $0.park != timer.park }
                }
            }
        }

        /// The client's reports once a check on a connection has its outcome.
        mutating func finish(_ check: UInt64, reusable: Bool, in harness: inout Harness) {
            guard let id = carrying.removeValue(forKey: check) else { return }
            ended.insert(check)
            harness.pool.checkFinished(check)
            perform(harness.pool.connectionFreed(id, reusable: reusable && !closing.contains(id) && !closed.contains(id)))
        }

        /// The close of connection `id` is reported.
        mutating func close(_ id: Int, in harness: inout Harness) {
            closing.remove(id)
            opened.remove(id)
            closed.insert(id)
            handshaking.remove(id)
            perform(harness.pool.closed(id))
        }
    }

    /// A small seeded generator, so that a failing order can be run again.
    private struct SplitMix: RandomNumberGenerator {
        var state: UInt64
        init(seed: UInt64) { state = seed }

        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE5_E509
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }

        /// One of `elements`, the same for the same seed (a set's order is not).
        mutating func pick<Element: Comparable>(_ elements: Set<Element>) -> Element? {
            guard !elements.isEmpty else { return nil }
            let sorted = elements.sorted()
            return sorted[Int(next() % UInt64(sorted.count))]
        }
    }
}
