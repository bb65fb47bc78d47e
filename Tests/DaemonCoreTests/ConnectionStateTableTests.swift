import Testing
@testable import SignupDaemonCore

/// Every state × event pair of `ConnectionStateMachine`, without a channel: each state is
/// reached by the events that reach it in the daemon, each event applied to it, and the
/// action and the state after compared with the table below. A pair that cannot occur says
/// why, in the table, instead of an outcome; the test checks that the table names every pair.
@Suite struct ConnectionStateTableTests {
    typealias Machine = ConnectionStateMachine
    static let line = Machine.Frame.line(Array(#"{"op":"ping"}"#.utf8))
    /// A line of `readAheadBytes`: a connection waiting for its turn with it is read no more.
    static let bigLine = Machine.Frame.line(Array(#"{"op":"ping","pad":""#.utf8) + Array(repeating: UInt8(ascii: "x"), count: Machine.readAheadBytes) + Array(#""}"#.utf8))

    /// The states, each reached from a new connection by the events that lead there.
    static let states: [(name: String, build: @Sendable () -> Machine)] = [
        ("connecting", { Machine() }),
        ("refused", {
            var m = Machine()
            _ = m.admission(.tooManyConnections, uid: 7, maxConnections: 1, maxConnectionsPerUID: 1, connectsPerUIDPerSecond: nil)
            return m
        }),
        // Admitted, nothing buffered, a read passed on.
        ("open", { open() }),
        // A line's answer comes from elsewhere; the next line waits and NIO's read is held back.
        ("awaiting", {
            var m = open()
            m.received(line)
            m.received(line)
            _ = m.receivedAll()
            _ = m.nextFrame()
            m.awaitReply()
            _ = m.readRequested()
            return m
        }),
        // The uid's share of the turn is spent with a line left.
        ("waiting for turn", {
            var m = open()
            m.received(line)
            m.received(line)
            _ = m.receivedAll()
            _ = m.nextFrame()
            _ = m.drainEnded(outputFull: false)
            return m
        }),
        // The same with more than `readAheadBytes` left: its reads are held back too.
        ("waiting for turn, read ahead", {
            var m = open()
            m.received(line)
            m.received(bigLine)
            _ = m.receivedAll()
            _ = m.nextFrame()
            _ = m.drainEnded(outputFull: false)
            return m
        }),
        // The client has not read its answers, with a line left.
        ("waiting for output", {
            var m = open()
            m.received(line)
            m.received(line)
            _ = m.receivedAll()
            _ = m.nextFrame()
            _ = m.drainEnded(outputFull: true)
            return m
        }),
        // Paused for a handover with a line not handled.
        ("paused", {
            var m = open()
            m.pause()
            m.received(line)
            _ = m.receivedAll()
            _ = m.readRequested()
            return m
        }),
        // The client half-closed while an answer was awaited.
        // Paused for a handover while an answer is awaited (the handover waits for it: `whenReplied`).
        ("paused, awaiting", {
            var m = open()
            m.received(line)
            _ = m.receivedAll()
            _ = m.nextFrame()
            m.awaitReply()
            m.pause()
            return m
        }),
        ("draining", {
            var m = open()
            m.received(line)
            _ = m.receivedAll()
            _ = m.nextFrame()
            m.awaitReply()
            _ = m.inputClosed()
            return m
        }),
        ("closing", {
            var m = open()
            _ = m.end(.idle(seconds: 600))
            return m
        }),
        ("closed", {
            var m = open()
            _ = m.inactive()
            return m
        }),
    ]

    static func open() -> Machine {
        var m = Machine()
        _ = m.admission(.admitted, uid: 7, maxConnections: 10, maxConnectionsPerUID: 5, connectsPerUIDPerSecond: nil)
        _ = m.readRequested()
        return m
    }

    /// The events, each applied to a state: what it returns, as text.
    static let events: [(name: String, apply: @Sendable (inout Machine) -> String)] = [
        ("admission", { m in "\(m.admission(.admitted, uid: 7, maxConnections: 10, maxConnectionsPerUID: 5, connectsPerUIDPerSecond: nil))" }),
        ("adopted", { m in
            m.adopted(pending: [line])
            return "-"
        }),
        ("readRequested", { m in "\(m.readRequested())" }),
        ("received+receivedAll", { m in
            m.received(line)
            return "\(m.receivedAll())"
        }),
        ("nextFrame", { m in m.nextFrame() == nil ? "nil" : "line" }),
        ("awaitReply", { m in
            m.awaitReply()
            return "-"
        }),
        ("drainEnded(room)", { m in "\(m.drainEnded(outputFull: false))" }),
        ("drainEnded(full)", { m in "\(m.drainEnded(outputFull: true))" }),
        ("woke", { m in "\(m.woke())" }),
        ("replied", { m in "\(m.replied())" }),
        ("inputClosed", { m in "\(m.inputClosed())" }),
        ("progressed(idle)", { m in "\(m.progressed(sessionsBusy: false))" }),
        ("progressed(busy)", { m in "\(m.progressed(sessionsBusy: true))" }),
        ("end(idle)", { m in "\(m.end(.idle(seconds: 600)))" }),
        ("end(failed)", { m in "\(m.end(.failed))" }),
        ("writeFailed", { m in "\(m.writeFailed())" }),
        ("inactive", { m in "\(m.inactive())" }),
        ("pause", { m in
            m.pause()
            return "-"
        }),
        ("handOver", { m in "\(m.handOver())" }),
        ("resume", { m in "\(m.resume())" }),
    ]

    /// The state after an event, as text: lifecycle, lines buffered, and the flags set.
    static func summary(_ m: Machine) -> String {
        var parts = ["\(m.lifecycle)", "lines \(m.pending.count)"]
        if m.awaitingReply { parts.append("awaiting") }
        if let wake = m.wake { parts.append("wake \(wake)") }
        if m.readHeld { parts.append("read held") }
        if m.paused { parts.append("paused") }
        return parts.joined(separator: ", ")
    }

    enum Expected {
        /// The action returned, then the state after (`summary`).
        case outcome(String, String)
        /// The pair cannot occur in the daemon, for this reason.
        case cannotOccur(String)
    }

    @Test func theTableNamesEveryPairAndEveryPossiblePairBehavesAsItSays() {
        var unnamed: [String] = []
        var checked = 0
        var cannot = 0
        for (stateName, build) in Self.states {
            for (eventName, apply) in Self.events {
                guard let expected = Self.table[stateName]?[eventName] else {
                    // Both are preconditions of a new connection: never run on another state.
                    guard stateName == "connecting" || !["admission", "adopted"].contains(eventName) else {
                        unnamed.append("\"\(stateName)\" × \"\(eventName)\": (a precondition)")
                        continue
                    }
                    var m = build()
                    let action = apply(&m)
                    unnamed.append("\"\(stateName)\" × \"\(eventName)\": .outcome(\"\(action)\", \"\(Self.summary(m))\")")
                    continue
                }
                guard case .outcome(let action, let after) = expected else {
                    cannot += 1
                    continue
                }
                checked += 1
                var m = build()
                let got = apply(&m)
                #expect(got == action, "\(stateName) × \(eventName): the action")
                #expect(Self.summary(m) == after, "\(stateName) × \(eventName): the state after")
            }
        }
        #expect(checked + cannot == Self.states.count * Self.events.count && checked > 0)
        #expect(unnamed.isEmpty, "pairs the table does not name:\n\(unnamed.joined(separator: "\n"))")
    }

    static let table: [String: [String: Expected]] = [
        "connecting": [
            "admission": .outcome("greet", "open, lines 0"),
            "adopted": .outcome("-", "open, lines 1, paused"),
            "readRequested": .cannotOccur(Self.beforeAdmission),
            "received+receivedAll": .cannotOccur(Self.beforeAdmission),
            "nextFrame": .cannotOccur(Self.beforeAdmission),
            "awaitReply": .cannotOccur(Self.beforeAdmission),
            "drainEnded(room)": .cannotOccur(Self.beforeAdmission),
            "drainEnded(full)": .cannotOccur(Self.beforeAdmission),
            "woke": .cannotOccur(Self.beforeAdmission),
            "replied": .cannotOccur(Self.beforeAdmission),
            "inputClosed": .cannotOccur(Self.beforeAdmission),
            "progressed(idle)": .cannotOccur(Self.beforeAdmission),
            "progressed(busy)": .cannotOccur(Self.beforeAdmission),
            "end(idle)": .cannotOccur(Self.beforeAdmission),
            "end(failed)": .cannotOccur(Self.beforeAdmission),
            "writeFailed": .cannotOccur(Self.beforeAdmission),
            "inactive": .cannotOccur(Self.beforeAdmission),
            "pause": .cannotOccur(Self.beforeAdmission),
            "handOver": .cannotOccur(Self.beforeAdmission),
            "resume": .cannotOccur(Self.beforeAdmission),
        ],
        "refused": [
            "admission": .cannotOccur(Self.precondition),
            "adopted": .cannotOccur(Self.precondition),
            "readRequested": .outcome("hold", "refused, lines 0, read held"),
            "received+receivedAll": .cannotOccur(Self.notReading),
            "nextFrame": .outcome("nil", "refused, lines 0"),
            "awaitReply": .cannotOccur(Self.notHandling),
            "drainEnded(room)": .cannotOccur(Self.noDrain),
            "drainEnded(full)": .cannotOccur(Self.noDrain),
            "woke": .cannotOccur(Self.noWake),
            "replied": .cannotOccur(Self.noAwait),
            "inputClosed": .outcome("none", "refused, lines 0"),
            "progressed(idle)": .cannotOccur(Self.onlyDraining),
            "progressed(busy)": .cannotOccur(Self.onlyDraining),
            "end(idle)": .outcome("none", "refused, lines 0"),
            "end(failed)": .outcome("close", "refused, lines 0"),
            "writeFailed": .outcome("none", "refused, lines 0"),
            "inactive": .outcome("release(deregister: false)", "closed, lines 0"),
            "pause": .cannotOccur(Self.notStored),
            "handOver": .cannotOccur(Self.notStored),
            "resume": .cannotOccur(Self.notStored),
        ],
        "open": [
            "admission": .cannotOccur(Self.precondition),
            "adopted": .cannotOccur(Self.precondition),
            "readRequested": .outcome("read", "open, lines 0"),
            "received+receivedAll": .outcome("drain", "open, lines 1"),
            "nextFrame": .outcome("nil", "open, lines 0"),
            "awaitReply": .outcome("-", "open, lines 0, awaiting"),
            "drainEnded(room)": .outcome("none", "open, lines 0"),
            "drainEnded(full)": .outcome("none", "open, lines 0"),
            "woke": .cannotOccur(Self.noWake),
            "replied": .cannotOccur(Self.noAwait),
            "inputClosed": .outcome("finishInput", "draining, lines 0"),
            "progressed(idle)": .cannotOccur(Self.onlyDraining),
            "progressed(busy)": .cannotOccur(Self.onlyDraining),
            "end(idle)": .outcome(#"sayBye("idle: no request for 600 seconds")"#, "closing, lines 0"),
            "end(failed)": .outcome("close", "closing, lines 0"),
            "writeFailed": .outcome("dropInput", "closing, lines 0"),
            "inactive": .outcome("release(deregister: true)", "closed, lines 0"),
            "pause": .outcome("-", "open, lines 0, paused"),
            "handOver": .outcome("save", "open, lines 0, paused"),
            "resume": .outcome("ignore", "open, lines 0"),
        ],
        "awaiting": [
            "admission": .cannotOccur(Self.precondition),
            "adopted": .cannotOccur(Self.precondition),
            "readRequested": .outcome("hold", "open, lines 1, awaiting, read held"),
            "received+receivedAll": .outcome("wait", "open, lines 2, awaiting, read held"),
            "nextFrame": .outcome("nil", "open, lines 1, awaiting, read held"),
            "awaitReply": .outcome("-", "open, lines 1, awaiting, read held"),
            "drainEnded(room)": .outcome("none", "open, lines 1, awaiting, read held"),
            "drainEnded(full)": .outcome("none", "open, lines 1, awaiting, read held"),
            "woke": .cannotOccur(Self.noWake),
            "replied": .outcome("drain", "open, lines 1, read held"),
            "inputClosed": .outcome("finishInput", "draining, lines 1, awaiting"),
            "progressed(idle)": .cannotOccur(Self.onlyDraining),
            "progressed(busy)": .cannotOccur(Self.onlyDraining),
            "end(idle)": .outcome(#"sayBye("idle: no request for 600 seconds")"#, "closing, lines 1, awaiting, read held"),
            "end(failed)": .outcome("close", "closing, lines 1, awaiting, read held"),
            "writeFailed": .outcome("dropInput", "closing, lines 0, awaiting, read held"),
            "inactive": .outcome("release(deregister: true)", "closed, lines 0"),
            "pause": .outcome("-", "open, lines 1, awaiting, read held, paused"),
            "handOver": .outcome("notYet", "open, lines 1, awaiting, read held, paused"),
            "resume": .outcome("ignore", "open, lines 1, awaiting, read held"),
        ],
        "waiting for turn": [
            "admission": .cannotOccur(Self.precondition),
            "adopted": .cannotOccur(Self.precondition),
            "readRequested": .outcome("read", "open, lines 1, wake turn"),
            "received+receivedAll": .outcome("wait", "open, lines 2, wake turn"),
            "nextFrame": .outcome("nil", "open, lines 1, wake turn"),
            "awaitReply": .cannotOccur(Self.notHandling),
            "drainEnded(room)": .cannotOccur(Self.noDrain),
            "drainEnded(full)": .cannotOccur(Self.noDrain),
            "woke": .outcome("drain", "open, lines 1"),
            "replied": .cannotOccur(Self.noAwait),
            "inputClosed": .outcome("finishInput", "draining, lines 1, wake turn"),
            "progressed(idle)": .cannotOccur(Self.onlyDraining),
            "progressed(busy)": .cannotOccur(Self.onlyDraining),
            "end(idle)": .outcome(#"sayBye("idle: no request for 600 seconds")"#, "closing, lines 1, wake turn"),
            "end(failed)": .outcome("close", "closing, lines 1, wake turn"),
            "writeFailed": .outcome("dropInput", "closing, lines 0, wake turn"),
            "inactive": .outcome("release(deregister: true)", "closed, lines 0"),
            "pause": .outcome("-", "open, lines 1, wake turn, paused"),
            "handOver": .outcome("save", "open, lines 1, wake turn, paused"),
            "resume": .outcome("ignore", "open, lines 1, wake turn"),
        ],
        "waiting for turn, read ahead": [
            "admission": .cannotOccur(Self.precondition),
            "adopted": .cannotOccur(Self.precondition),
            "readRequested": .outcome("hold", "open, lines 1, wake turn, read held"),
            "received+receivedAll": .outcome("wait", "open, lines 2, wake turn"),
            "nextFrame": .outcome("nil", "open, lines 1, wake turn"),
            "awaitReply": .cannotOccur(Self.notHandling),
            "drainEnded(room)": .cannotOccur(Self.noDrain),
            "drainEnded(full)": .cannotOccur(Self.noDrain),
            "woke": .outcome("drain", "open, lines 1"),
            "replied": .cannotOccur(Self.noAwait),
            "inputClosed": .outcome("finishInput", "draining, lines 1, wake turn"),
            "progressed(idle)": .cannotOccur(Self.onlyDraining),
            "progressed(busy)": .cannotOccur(Self.onlyDraining),
            "end(idle)": .outcome(#"sayBye("idle: no request for 600 seconds")"#, "closing, lines 1, wake turn"),
            "end(failed)": .outcome("close", "closing, lines 1, wake turn"),
            "writeFailed": .outcome("dropInput", "closing, lines 0, wake turn"),
            "inactive": .outcome("release(deregister: true)", "closed, lines 0"),
            "pause": .outcome("-", "open, lines 1, wake turn, paused"),
            "handOver": .outcome("save", "open, lines 1, wake turn, paused"),
            "resume": .outcome("ignore", "open, lines 1, wake turn"),
        ],
        "waiting for output": [
            "admission": .cannotOccur(Self.precondition),
            "adopted": .cannotOccur(Self.precondition),
            "readRequested": .outcome("hold", "open, lines 1, wake output, read held"),
            "received+receivedAll": .outcome("wait", "open, lines 2, wake output"),
            "nextFrame": .outcome("nil", "open, lines 1, wake output"),
            "awaitReply": .cannotOccur(Self.notHandling),
            "drainEnded(room)": .cannotOccur(Self.noDrain),
            "drainEnded(full)": .cannotOccur(Self.noDrain),
            "woke": .outcome("drain", "open, lines 1"),
            "replied": .cannotOccur(Self.noAwait),
            "inputClosed": .outcome("finishInput", "draining, lines 1, wake output"),
            "progressed(idle)": .cannotOccur(Self.onlyDraining),
            "progressed(busy)": .cannotOccur(Self.onlyDraining),
            "end(idle)": .outcome(#"sayBye("idle: no request for 600 seconds")"#, "closing, lines 1, wake output"),
            "end(failed)": .outcome("close", "closing, lines 1, wake output"),
            "writeFailed": .outcome("dropInput", "closing, lines 0, wake output"),
            "inactive": .outcome("release(deregister: true)", "closed, lines 0"),
            "pause": .outcome("-", "open, lines 1, wake output, paused"),
            "handOver": .outcome("save", "open, lines 1, wake output, paused"),
            "resume": .outcome("ignore", "open, lines 1, wake output"),
        ],
        "paused": [
            "admission": .cannotOccur(Self.precondition),
            "adopted": .cannotOccur(Self.precondition),
            "readRequested": .outcome("hold", "open, lines 1, read held, paused"),
            "received+receivedAll": .outcome("wait", "open, lines 2, read held, paused"),
            "nextFrame": .outcome("nil", "open, lines 1, read held, paused"),
            "awaitReply": .cannotOccur(Self.notHandling),
            "drainEnded(room)": .cannotOccur(Self.noDrain),
            "drainEnded(full)": .cannotOccur(Self.noDrain),
            "woke": .cannotOccur(Self.noWake),
            "replied": .cannotOccur(Self.noAwait),
            "inputClosed": .outcome("finishInput", "draining, lines 1, paused"),
            "progressed(idle)": .cannotOccur(Self.onlyDraining),
            "progressed(busy)": .cannotOccur(Self.onlyDraining),
            "end(idle)": .outcome(#"sayBye("idle: no request for 600 seconds")"#, "closing, lines 1, read held, paused"),
            "end(failed)": .outcome("close", "closing, lines 1, read held, paused"),
            "writeFailed": .outcome("dropInput", "closing, lines 0, read held, paused"),
            "inactive": .outcome("release(deregister: true)", "closed, lines 0, paused"),
            "pause": .outcome("-", "open, lines 1, read held, paused"),
            "handOver": .outcome("save", "open, lines 1, read held, paused"),
            "resume": .outcome("drain", "open, lines 1, read held"),
        ],
        "paused, awaiting": [
            "admission": .cannotOccur(Self.precondition),
            "adopted": .cannotOccur(Self.precondition),
            "readRequested": .outcome("hold", "open, lines 0, awaiting, read held, paused"),
            "received+receivedAll": .outcome("wait", "open, lines 1, awaiting, paused"),
            "nextFrame": .outcome("nil", "open, lines 0, awaiting, paused"),
            "awaitReply": .cannotOccur(Self.notHandling),
            "drainEnded(room)": .cannotOccur(Self.noDrain),
            "drainEnded(full)": .cannotOccur(Self.noDrain),
            "woke": .cannotOccur(Self.noWake),
            "replied": .outcome("ignore", "open, lines 0, paused"),
            "inputClosed": .outcome("finishInput", "draining, lines 0, awaiting, paused"),
            "progressed(idle)": .cannotOccur(Self.onlyDraining),
            "progressed(busy)": .cannotOccur(Self.onlyDraining),
            "end(idle)": .outcome(#"sayBye("idle: no request for 600 seconds")"#, "closing, lines 0, awaiting, paused"),
            "end(failed)": .outcome("close", "closing, lines 0, awaiting, paused"),
            "writeFailed": .outcome("dropInput", "closing, lines 0, awaiting, paused"),
            "inactive": .outcome("release(deregister: true)", "closed, lines 0, paused"),
            "pause": .outcome("-", "open, lines 0, awaiting, paused"),
            "handOver": .outcome("notYet", "open, lines 0, awaiting, paused"),
            "resume": .outcome("drain", "open, lines 0, awaiting"),
        ],
        "draining": [
            "admission": .cannotOccur(Self.precondition),
            "adopted": .cannotOccur(Self.precondition),
            "readRequested": .outcome("hold", "draining, lines 0, awaiting, read held"),
            "received+receivedAll": .outcome("ignore", "draining, lines 0, awaiting"),
            "nextFrame": .outcome("nil", "draining, lines 0, awaiting"),
            "awaitReply": .outcome("-", "draining, lines 0, awaiting"),
            "drainEnded(room)": .outcome("none", "draining, lines 0, awaiting"),
            "drainEnded(full)": .outcome("none", "draining, lines 0, awaiting"),
            "woke": .cannotOccur(Self.noWake),
            "replied": .outcome("drain", "draining, lines 0"),
            "inputClosed": .outcome("none", "draining, lines 0, awaiting"),
            "progressed(idle)": .outcome("none", "draining, lines 0, awaiting"),
            "progressed(busy)": .outcome("none", "draining, lines 0, awaiting"),
            "end(idle)": .outcome(#"sayBye("idle: no request for 600 seconds")"#, "closing, lines 0, awaiting"),
            "end(failed)": .outcome("close", "closing, lines 0, awaiting"),
            "writeFailed": .outcome("dropInput", "closing, lines 0, awaiting"),
            "inactive": .outcome("release(deregister: true)", "closed, lines 0"),
            "pause": .outcome("-", "draining, lines 0, awaiting, paused"),
            "handOver": .outcome("notYet", "draining, lines 0, awaiting, paused"),
            "resume": .outcome("ignore", "draining, lines 0, awaiting"),
        ],
        "closing": [
            "admission": .cannotOccur(Self.precondition),
            "adopted": .cannotOccur(Self.precondition),
            "readRequested": .outcome("hold", "closing, lines 0, read held"),
            "received+receivedAll": .outcome("ignore", "closing, lines 0"),
            "nextFrame": .outcome("nil", "closing, lines 0"),
            "awaitReply": .outcome("-", "closing, lines 0, awaiting"),
            "drainEnded(room)": .outcome("none", "closing, lines 0"),
            "drainEnded(full)": .outcome("none", "closing, lines 0"),
            "woke": .outcome("ignore", "closing, lines 0"),
            "replied": .outcome("ignore", "closing, lines 0"),
            "inputClosed": .outcome("none", "closing, lines 0"),
            "progressed(idle)": .cannotOccur(Self.onlyDraining),
            "progressed(busy)": .cannotOccur(Self.onlyDraining),
            "end(idle)": .outcome("none", "closing, lines 0"),
            "end(failed)": .outcome("close", "closing, lines 0"),
            "writeFailed": .outcome("none", "closing, lines 0"),
            "inactive": .outcome("release(deregister: true)", "closed, lines 0"),
            "pause": .outcome("-", "closing, lines 0, paused"),
            "handOver": .outcome("save", "closing, lines 0, paused"),
            "resume": .outcome("ignore", "closing, lines 0"),
        ],
        "closed": [
            "admission": .cannotOccur(Self.precondition),
            "adopted": .cannotOccur(Self.precondition),
            "readRequested": .outcome("hold", "closed, lines 0, read held"),
            "received+receivedAll": .outcome("ignore", "closed, lines 0"),
            "nextFrame": .outcome("nil", "closed, lines 0"),
            "awaitReply": .outcome("-", "closed, lines 0, awaiting"),
            "drainEnded(room)": .outcome("none", "closed, lines 0"),
            "drainEnded(full)": .outcome("none", "closed, lines 0"),
            "woke": .outcome("ignore", "closed, lines 0"),
            "replied": .outcome("ignore", "closed, lines 0"),
            "inputClosed": .outcome("none", "closed, lines 0"),
            "progressed(idle)": .cannotOccur(Self.onlyDraining),
            "progressed(busy)": .cannotOccur(Self.onlyDraining),
            "end(idle)": .outcome("none", "closed, lines 0"),
            "end(failed)": .outcome("none", "closed, lines 0"),
            "writeFailed": .outcome("none", "closed, lines 0"),
            "inactive": .cannotOccur(Self.inactiveOnce),
            "pause": .cannotOccur(Self.notStored),
            "handOver": .cannotOccur(Self.notStored),
            "resume": .cannotOccur(Self.notStored),
        ],
    ]

    // Why a pair cannot occur.
    static let precondition = "admission once, from channelActive, and adoption from init: both only for a new connection"
    static let beforeAdmission = "channelActive decides admission before NIO delivers anything else, and nothing else knows the connection yet"
    static let notReading = "reads are held back (readRequested) while it does not read requests, so NIO delivers no input"
    static let noWake = "woke answers a wake-up the machine asked for (drainEnded), and none is pending"
    static let noAwait = "replied answers an awaitReply, and none is pending"
    static let notHandling = "awaitReply comes only from a request being handled, and none is while a wake-up is pending or it is paused or refused"
    static let onlyDraining = "the handler asks only a draining connection (closeIfDone)"
    static let notStored = "the handover acts only on connections it stored (holding a session): a refused one never was, a closed one it forgot (channelInactive)"
    static let noDrain = "drainEnded follows a drain, and a drain runs only while mayDrain (not paused, no wake-up pending)"
    static let inactiveOnce = "channelInactive comes once"
}
