// A transport without SwiftNIO, to see what SwiftNIO costs and what signupd's keystroke costs
// on top of a transport as cheap as the anchor's (scripts/bench/nio_floor.py; BENCHMARKS.md,
// issue 29). THREADS threads, each with its own epoll, the listening socket in every one
// (EPOLLEXCLUSIVE: one thread woken a connection); level-triggered; per readiness one read of
// up to 8 KiB and one write of all the answers it made, as the anchor does.
//   fixed:  every line answered with one fixed line the size of signupd's `validation`
//           event (nio-floor's and the anchor's twin: parses nothing).
//   engine: a line read as signupd reads it (Request.decode), `open` starting a signup
//           FormSession, `set` handled by it (FormSession.handle) and its events written as
//           signupd writes them (ServerEvent.encode); anything else answered with a pong.
//           signupd's keystroke without NIO, fairness, budgets, metrics or logging.
//   epoll-floor SOCKET THREADS fixed|engine
import CEpoll
import FormEngine
import Glibc
import SignupProtocol

let arguments = CommandLine.arguments
guard arguments.count == 4, let threads = Int(arguments[2]), threads > 0, ["fixed", "engine"].contains(arguments[3]) else {
    fatalError("usage: epoll-floor SOCKET THREADS fixed|engine")
}
let engine = arguments[3] == "engine"
let hello = Array(#"{"event":"hello","protocol":"signup/1","server":"epoll-floor"}"#.utf8) + [10]
let answer = Array(
    (#"{"event":"validation","session":"dd293999b39b2fdd","seq":7,"field":"password","state":"ok","#
        + #""message":"Password acceptable","messageId":"password.acceptable","params":{},"pong":true}"#).utf8
) + [10]
let pong = Array(#"{"event":"pong","id":"sync"}"#.utf8) + [10]
let library = FormLibrary.builtin
let form = library.form(named: "signup")!
let configuration = FormConfiguration(catalogues: library.catalogues)

func now() -> Moment {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return Moment(nanoseconds: Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec))
}

final class Connection {
    let fd: Int32
    private var partial: [UInt8] = []
    var output: [UInt8] = []
    private var session: FormSession?
    private var seq: UInt64 = 0
    private var writer = JSONWriter(reservingCapacity: 512)

    init(fd: Int32) {
        self.fd = fd
        output.reserveCapacity(512)
    }

    private func handle(line: UnsafeRawBufferPointer) {
        guard engine else { return output.append(contentsOf: answer) }
        switch (try? Request.decode(line: line))?.operation {
        case .set(_, let field, let value)?:
            // In place, as the daemon's Session keeps its state.
            guard session != nil, let step = try? session!.handle(.set(field: field, value: value), now: now()) else { return }
            for event in step.events {
                seq += 1
                writer.reset()
                ServerEvent.session(session: "7e2e6d1df26beff7", seq: seq, event, id: nil).encode(into: &writer)
                writer.withBytes { output.append(contentsOf: $0) }
            }
        case .open?:
            session = FormSession(form: form, locale: "en", configuration: configuration)
        default:
            output.append(contentsOf: pong)
        }
    }

    /// Reads once and answers every whole line read. False: the peer is gone.
    func readable() -> Bool {
        let count = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 8192) { chunk -> Int in
            let count = read(fd, chunk.baseAddress, chunk.count)
            guard count > 0 else { return count }
            let bytes = UnsafeRawBufferPointer(start: chunk.baseAddress, count: count)
            var start = 0
            while let newline = bytes[start...].firstIndex(of: 10) {
                if partial.isEmpty {
                    handle(line: UnsafeRawBufferPointer(rebasing: bytes[start..<newline]))
                } else {
                    partial.append(contentsOf: bytes[start..<newline])
                    partial.withUnsafeBytes { handle(line: $0) }
                    partial.removeAll(keepingCapacity: true)
                }
                start = newline + 1
            }
            partial.append(contentsOf: bytes[start...])
            return count
        }
        return count > 0 || (count < 0 && errno == EAGAIN)
    }

    /// Writes what it can. True: nothing is left.
    func flush() -> Bool {
        guard !output.isEmpty else { return true }
        let written = output.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        if written == output.count {
            output.removeAll(keepingCapacity: true)
            return true
        }
        if written > 0 { output.removeFirst(written) }
        return false
    }
}

func serve(listener: Int32) {
    let ep = ep_create()
    precondition(ep >= 0 && ep_watch(ep, listener, 0, 1, 1) == 0)
    var connections = [Connection?](repeating: nil, count: 65536)
    var waitingToWrite = Set<Int32>()
    var fds = [Int32](repeating: 0, count: 256)
    var writable = [Int32](repeating: 0, count: 256)
    while true {
        let ready = ep_wait(ep, &fds, &writable, 256)
        for index in 0..<max(0, Int(ready)) {
            let fd = fds[index]
            if fd == listener {
                while case let client = accept_nonblocking(listener), client >= 0 {
                    guard Int(client) < connections.count else {
                        close(client)
                        continue
                    }
                    let connection = Connection(fd: client)
                    connections[Int(client)] = connection
                    connection.output.append(contentsOf: hello)
                    ep_watch(ep, client, connection.flush() ? 0 : 1, 0, 1)
                }
                continue
            }
            guard let connection = connections[Int(fd)] else { continue }
            // A client that does not read its answers is not read from until it does (its
            // descriptor is watched for room to write alone meanwhile).
            if waitingToWrite.contains(fd) {
                guard writable[index] != 0, connection.flush() else { continue }
                waitingToWrite.remove(fd)
                ep_watch(ep, fd, 0, 0, 0)
                continue
            }
            if !connection.readable() {
                ep_forget(ep, fd)
                close(fd)
                connections[Int(fd)] = nil
            } else if !connection.flush() {
                waitingToWrite.insert(fd)
                ep_watch(ep, fd, 1, 0, 0)
            }
        }
    }
}

// A client gone with answers unsent is a failed write, not the end of the server.
signal(SIGPIPE, SIG_IGN)
let listener = unix_listen(arguments[1])
precondition(listener >= 0, "cannot listen on \(arguments[1])")
/// Another thread serving `listener` (the descriptor passed as the thread's argument: the
/// top-level code is the main actor's, and this thread is not).
nonisolated func spawn(serving listener: Int32) {
    var thread = pthread_t()
    pthread_create(&thread, nil, { argument in
        serve(listener: Int32(Int(bitPattern: argument)))
        return nil
    }, UnsafeMutableRawPointer(bitPattern: Int(listener)))
}

for _ in 1..<threads { spawn(serving: listener) }
serve(listener: listener)
