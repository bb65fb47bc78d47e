import NIOConcurrencyHelpers
import NIOCore

/// Many long timers on one event loop (every session's idle check), each cancelled in
/// constant time, behind one NIO task per loop.
///
/// NIO keeps a loop's scheduled tasks in one heap and cancels a task by searching that heap
/// from the start: with a timer per session, every session that ended (and every session
/// frozen for a restart) paid for a search through all the others. At 10,000 sessions the
/// freeze went from 68–102 ms to 45–57 ms without them (a third to a half of it), and ending
/// 10,000 sessions whose clients left had cost about 0.45 s of CPU, much of it in NIO's
/// cancel and heap (issue 29, BENCHMARKS.md). Here a timer is a heap entry and a table entry; a
/// cancel removes the table entry, and the heap entry is dropped when it comes up (or when
/// dropped entries outnumber live ones, the heap is rebuilt from the table). NIO's heap
/// then holds one task per loop for these timers instead of one per session.
///
/// Confined to its loop (`LoopTimersByLoop` hands each loop its own). Deadlines are the
/// loop's (`EventLoop.now`), so an embedded loop's virtual time drives them in tests.
final class LoopTimers: EventLoopConfined {
    struct Token: Hashable, Sendable {
        fileprivate let id: UInt64
    }

    let eventLoop: EventLoop
    private var heap: [(deadline: NIODeadline, id: UInt64)] = []
    private var live: [UInt64: (deadline: NIODeadline, body: () -> Void)] = [:]
    private var nextID: UInt64 = 0
    /// The NIO task that runs what is due, and when.
    private var armed: (deadline: NIODeadline, task: Scheduled<Void>)?
    /// Running what is due: what that sets is armed once, after.
    private var firing = false

    init(eventLoop: EventLoop) {
        self.eventLoop = eventLoop
    }

    /// How many timers are set.
    var count: Int { live.count }

    /// Runs `body` on the loop once `deadline` has passed, unless cancelled first.
    func schedule(at deadline: NIODeadline, _ body: @escaping () -> Void) -> Token {
        eventLoop.preconditionInEventLoop()
        nextID += 1
        live[nextID] = (deadline, body)
        push((deadline, nextID))
        if !firing, armed.map({ deadline < $0.deadline }) ?? true { arm() }
        return Token(id: nextID)
    }

    func schedule(in delay: TimeAmount, _ body: @escaping () -> Void) -> Token {
        schedule(at: eventLoop.now + delay, body)
    }

    /// The timer does not run (nothing if it ran or was cancelled already).
    func cancel(_ token: Token) {
        eventLoop.preconditionInEventLoop()
        guard live.removeValue(forKey: token.id) != nil else { return }
        if heap.count > 2 * live.count + 64 { rebuild() }
    }

    /// Runs every timer that is due, in deadline order, then waits for the next.
    private func fire() {
        armed = nil
        firing = true
        let now = eventLoop.now
        while let top = heap.first, top.deadline <= now {
            popTop()
            guard let timer = live.removeValue(forKey: top.id) else { continue }
            timer.body()
        }
        firing = false
        arm()
    }

    /// One NIO task, for the earliest live deadline (dropped entries on top are discarded).
    private func arm() {
        while let top = heap.first, live[top.id] == nil { popTop() }
        guard let next = heap.first?.deadline else {
            armed?.task.cancel()
            armed = nil
            return
        }
        if let armed, armed.deadline == next { return }
        armed?.task.cancel()
        armed = (next, eventLoop.assumeIsolated().scheduleTask(deadline: next) { [self] in fire() })
    }

    private func rebuild() {
        heap = live.map { (deadline: $0.value.deadline, id: $0.key) }
        guard heap.count > 1 else { return }
        for index in stride(from: heap.count / 2 - 1, through: 0, by: -1) { siftDown(index) }
    }

    // MARK: A binary min-heap of (deadline, id): ids break ties, so equal deadlines run in the order set.

    private static func before(_ a: (deadline: NIODeadline, id: UInt64), _ b: (deadline: NIODeadline, id: UInt64)) -> Bool {
        (a.deadline, a.id) < (b.deadline, b.id)
    }

    private func push(_ entry: (deadline: NIODeadline, id: UInt64)) {
        heap.append(entry)
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard Self.before(heap[child], heap[parent]) else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private func popTop() {
        let last = heap.removeLast()
        guard !heap.isEmpty else { return }
        heap[0] = last
        siftDown(0)
    }

    private func siftDown(_ start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1
            guard left < heap.count else { return }
            var smallest = left
            if left + 1 < heap.count, Self.before(heap[left + 1], heap[left]) { smallest = left + 1 }
            guard Self.before(heap[smallest], heap[parent]) else { return }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
    }
}

/// Each event loop's `LoopTimers`, made on first use.
final class LoopTimersByLoop: Sendable {
    private let byLoop = NIOLockedValueBox([ObjectIdentifier: NIOLoopBound<LoopTimers>]())

    init() {}

    /// The loop's timers; call on that loop.
    func timers(on eventLoop: EventLoop) -> LoopTimers {
        eventLoop.preconditionInEventLoop()
        return byLoop.withLockedValue { byLoop in
            if let timers = byLoop[ObjectIdentifier(eventLoop)] { return timers.value }
            let timers = LoopTimers(eventLoop: eventLoop)
            byLoop[ObjectIdentifier(eventLoop)] = NIOLoopBound(timers, eventLoop: eventLoop)
            return timers
        }
    }
}
