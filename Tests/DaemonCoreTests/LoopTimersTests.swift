import NIOCore
import NIOEmbedded
import Testing
@testable import SignupDaemonCore

/// Sessions' idle checks on one loop (`LoopTimers`): each runs once, at its deadline, in
/// deadline order; a cancelled one never runs; cancelling most of many leaves the rest on time.
@Suite struct LoopTimersTests {
    @Test func timersRunAtTheirDeadlinesInOrderAndCancelledOnesNever() {
        let loop = EmbeddedEventLoop()
        let timers = LoopTimers(eventLoop: loop)
        var ran: [String] = []
        _ = timers.schedule(in: .seconds(30)) { ran.append("c") }
        _ = timers.schedule(in: .seconds(10)) { ran.append("a") }
        let cancelled = timers.schedule(in: .seconds(20)) { ran.append("never") }
        _ = timers.schedule(in: .seconds(20)) { ran.append("b") }
        timers.cancel(cancelled)
        timers.cancel(cancelled)  // twice is nothing
        loop.advanceTime(by: .seconds(9))
        #expect(ran.isEmpty)
        loop.advanceTime(by: .seconds(1))
        #expect(ran == ["a"])
        loop.advanceTime(by: .seconds(15))
        #expect(ran == ["a", "b"])
        loop.advanceTime(by: .seconds(5))
        #expect(ran == ["a", "b", "c"])
        #expect(timers.count == 0)
    }

    @Test func aTimerSetWhileTimersRunRunsAtItsOwnDeadline() {
        let loop = EmbeddedEventLoop()
        let timers = LoopTimers(eventLoop: loop)
        var ran: [Int] = []
        _ = timers.schedule(in: .seconds(5)) {
            ran.append(5)
            _ = timers.schedule(in: .seconds(5)) { ran.append(10) }
        }
        loop.advanceTime(by: .seconds(5))
        #expect(ran == [5])
        loop.advanceTime(by: .seconds(4))
        #expect(ran == [5])
        loop.advanceTime(by: .seconds(1))
        #expect(ran == [5, 10])
    }

    @Test func cancellingMostOfManyLeavesTheRestOnTime() {
        let loop = EmbeddedEventLoop()
        let timers = LoopTimers(eventLoop: loop)
        var ran: [Int] = []
        var tokens: [LoopTimers.Token] = []
        for index in 0..<10_000 {
            tokens.append(timers.schedule(in: .seconds(Int64(1 + index % 100))) { ran.append(index) })
        }
        // Every one but each hundred-and-first is cancelled (the heap is rebuilt on the way).
        for (index, token) in tokens.enumerated() where index % 101 != 0 { timers.cancel(token) }
        let kept = (0..<10_000).filter { $0 % 101 == 0 }
        #expect(timers.count == kept.count)
        loop.advanceTime(by: .seconds(100))
        #expect(ran.sorted() == kept)
        // In deadline order, and in the order set for equal deadlines.
        let order = kept.sorted { (1 + $0 % 100, $0) < (1 + $1 % 100, $1) }
        #expect(ran == order)
        #expect(timers.count == 0)
    }

    @Test func anEarlierTimerThanTheArmedOneRunsFirst() {
        let loop = EmbeddedEventLoop()
        let timers = LoopTimers(eventLoop: loop)
        var ran: [String] = []
        _ = timers.schedule(in: .seconds(900)) { ran.append("late") }
        loop.advanceTime(by: .seconds(100))
        _ = timers.schedule(in: .seconds(1)) { ran.append("early") }
        loop.advanceTime(by: .seconds(1))
        #expect(ran == ["early"])
        loop.advanceTime(by: .seconds(799))
        #expect(ran == ["early", "late"])
    }
}
