// The keystroke's own work without I/O (scripts/bench/keystroke.sh; BENCHMARKS.md, issue 29):
// a `set` line read as the daemon reads it (Request.decode), handled by a signup session
// (FormSession.handle) and its events written as the daemon writes them (ServerEvent.encode),
// 2,000,000 times over 100 sessions, each `set` changing the password between a value
// too short and an acceptable one (as ndjson-load's). One thread, no NIO, no metrics.
//   mode parse | engine (parse + handle) | all (parse + handle + encode); N=… iterations.
import FormEngine
import SignupProtocol

#if canImport(Glibc)
import Glibc
#endif

func nowNanoseconds() -> UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
}

let mode = CommandLine.arguments.count > 1 ? CommandLine.arguments[1] : "all"
let iterations = Int(getenv("N").map { String(cString: $0) } ?? "") ?? 2_000_000
let library = FormLibrary.builtin
let form = library.form(named: "signup")!
let configuration = FormConfiguration(catalogues: library.catalogues)
let lines: [[UInt8]] = [
    Array(#"{"op":"set","field":"password","value":"abc"}"#.utf8),
    Array(#"{"op":"set","field":"password","value":"abcdef"}"#.utf8),
]
var sessions = (0..<100).map { _ in FormSession(form: form, locale: "en", configuration: configuration) }
var writer = JSONWriter(reservingCapacity: 512)
var output: [UInt8] = []
output.reserveCapacity(1 << 16)
var seq: UInt64 = 0
var checksum = 0
for round in 0..<(iterations < 100_000 ? 1 : 3) {
    let start = nowNanoseconds()
    for iteration in 0..<iterations {
        let request = try! Request.decode(line: lines[iteration & 1])
        guard case .set(_, let field, let value) = request.operation else { fatalError("not a set") }
        if mode == "parse" {
            checksum &+= value.utf8.count
            continue
        }
        // Iterations 2k and 2k+1 go to the same session: every set changes its value.
        let step = try! sessions[(iteration >> 1) % 100].handle(.set(field: field, value: value), now: Moment(nanoseconds: Int64(iteration)))
        if mode == "engine" {
            checksum &+= step.events.count
            continue
        }
        for event in step.events {
            seq += 1
            writer.reset()
            ServerEvent.session(session: "7e2e6d1df26beff7", seq: seq, event, id: nil).encode(into: &writer)
            // As the daemon copies them into its output buffer: lent, not copied out first.
            writer.withBytes { output.append(contentsOf: $0) }
        }
        if output.count > 60_000 {
            checksum &+= output.count
            output.removeAll(keepingCapacity: true)
        }
    }
    let perRequest = Double(nowNanoseconds() - start) / Double(iterations)
    print("round \(round + 1): \(Int(perRequest)) ns a request (\(mode); checksum \(checksum))")
}
