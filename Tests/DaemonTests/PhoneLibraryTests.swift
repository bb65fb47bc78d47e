import Foundation
import SignupProtocol
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// libphonenumber in a library of signupd's own, `libsignupd-phone.so`, found at start and
/// opened after it (issue 29, the cold start): where signupd looks for it, and what a start
/// without it, or with a damaged one, does. Each case runs a copy of the real binary laid out
/// as an install would lay it out.
@Suite("The phone-number library, found beside signupd and opened after start")
struct PhoneLibraryTests {
    private static let library = URL(fileURLWithPath: DaemonProcess.binary).deletingLastPathComponent().appendingPathComponent("libsignupd-phone.so").path

    /// `signupd` copied to `directory/sbin`, and `library` (if any) to `at` under `directory`.
    private func install(in directory: String, library: Data?, at relative: String) throws -> String {
        let manager = FileManager.default
        try manager.createDirectory(atPath: "\(directory)/sbin", withIntermediateDirectories: true)
        try manager.copyItem(atPath: DaemonProcess.binary, toPath: "\(directory)/sbin/signupd")
        if let library {
            let path = "\(directory)/\(relative)"
            try manager.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try library.write(to: URL(fileURLWithPath: path))
        }
        return "\(directory)/sbin/signupd"
    }

    /// The phone field's validation states after typing `number` in a fresh phone-signup session.
    private func phoneStates(_ daemon: DaemonProcess, _ number: String) throws -> [String] {
        let client = try daemon.connect()
        _ = try client.hello()
        _ = try client.open("phone-signup")
        return try client.set("phone", number)
            .filter { $0.string("event") == "validation" && $0.string("field") == "phone" }
            .map { "\($0.string("state") ?? "") \($0.string("messageId") ?? "")" }
    }

    /// A daemon of the copy at `program`, its phone rules asked once; the daemon stopped.
    private func refusedEverywhere(_ program: String, in directory: String) throws -> DaemonProcess {
        let daemon = DaemonProcess(directory: directory)
        try daemon.start(.systemd, program: program)
        let states = try phoneStates(daemon, "13800138000")
        #expect(states == ["failed phone.unavailable"], "\(states)")
        // Everything else serves on: a username form validates as always.
        let client = try daemon.connect()
        _ = try client.hello()
        _ = try client.open("signup")
        let username = try client.set("username", "a b").filter { $0.string("event") == "validation" && $0.string("field") == "username" }
        #expect(username.map { $0.string("messageId") } == ["username.invalid_characters"], "\(username)")
        // `status` says so to anyone who asks (helper-28: only the journal did).
        try client.send(Request(.status))
        let phone = try client.next("status")["phoneNumbers"]?.objectValue
        #expect(phone?["healthy"] == .bool(false) && phone?.string("cause")?.contains("libsignupd-phone.so") == true, "\(String(describing: phone))")
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit() == 0)
        return daemon
    }

    @Test("without the library beside it or in ../lib/signupd, signupd starts, refuses every number and says where it looked, at critical")
    func missing() throws {
        let directory = DaemonProcess.makeDirectory()
        let program = try install(in: directory, library: nil, at: "")
        let daemon = try refusedEverywhere(program, in: directory)
        #expect(daemon.log.contains("critical"), "\(daemon.log)")
        #expect(daemon.log.contains("phone numbers cannot be checked: libsignupd-phone.so is neither in \(directory)/sbin/../lib/signupd, where it is installed with signupd, nor in \(directory)/sbin"), "\(daemon.log)")
        #expect(daemon.log.contains("apt install --reinstall signupd"))
    }

    @Test("installed in ../lib/signupd beside the binary (/usr/sbin and /usr/lib/signupd), numbers are checked")
    func installedLayout() throws {
        let directory = DaemonProcess.makeDirectory()
        let program = try install(in: directory, library: try Data(contentsOf: URL(fileURLWithPath: Self.library)), at: "lib/signupd/libsignupd-phone.so")
        let daemon = DaemonProcess(directory: directory)
        try daemon.start(.systemd, arguments: ["--log-level", "debug"], program: program)
        #expect(try phoneStates(daemon, "138001380") == ["failed phone.too_short"])
        // A valid number goes on to the availability check, as libphonenumber judged it.
        #expect(try phoneStates(daemon, "138 0013 8000").first == "validating phone.checking")
        let client = try daemon.connect()
        _ = try client.hello()
        try client.send(Request(.status))
        let phone = try client.next("status")["phoneNumbers"]?.objectValue
        #expect(phone?["healthy"] == .bool(true))
        // The test runs as root, an administrator: which file was opened.
        #expect(phone?["library"] == .string("\(directory)/lib/signupd/libsignupd-phone.so"), "\(String(describing: phone))")
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit() == 0)
        #expect(!daemon.log.contains("phone numbers cannot be checked"))
        // At debug, which file was opened (helper-28: nothing said where it came from).
        #expect(daemon.log.contains("phone numbers: libphonenumber opened") && daemon.log.contains("library=\(directory)/lib/signupd/libsignupd-phone.so"), "\(daemon.log)")
    }

    @Test("a file that is no library, or a library cut short (helper-28: SIGBUS at every start), is never opened: numbers refused, the rest served")
    func damaged() throws {
        let whole = try Data(contentsOf: URL(fileURLWithPath: Self.library))
        for (bytes, says) in [(Data("not a shared object\n".utf8), "is not a 64-bit ELF shared object"), (whole.prefix(5_000), "is cut short")] {
            let directory = DaemonProcess.makeDirectory()
            let program = try install(in: directory, library: bytes, at: "sbin/libsignupd-phone.so")
            let daemon = try refusedEverywhere(program, in: directory)
            #expect(daemon.log.contains("phone numbers cannot be checked: \(directory)/sbin/libsignupd-phone.so \(says)"), "\(daemon.log)")
        }
    }

    /// `library` with its dynamic section overwritten (helper-29: the same length, and a
    /// SIGSEGV in the loader at every start).
    private static func withDynamicSectionOverwritten(_ library: Data) -> Data {
        var bytes = [UInt8](library)
        func word(_ at: Int, _ size: Int) -> Int { (0..<size).reduce(0) { $0 | Int(bytes[at + $1]) << (8 * $1) } }
        let headers = word(0x20, 8), count = word(0x38, 2), size = word(0x36, 2)
        for index in 0..<count where word(headers + index * size, 4) == 2 {  // PT_DYNAMIC
            let offset = word(headers + index * size + 8, 8), length = word(headers + index * size + 32, 8)
            for at in offset..<(offset + length) { bytes[at] = 0xff }
        }
        return Data(bytes)
    }

    @Test("a library damaged but whole (its dynamic section overwritten) kills a test process, not signupd")
    func damagedButWhole() throws {
        let whole = try Data(contentsOf: URL(fileURLWithPath: Self.library))
        let damaged = Self.withDynamicSectionOverwritten(whole)
        #expect(damaged.count == whole.count && damaged != whole)
        let directory = DaemonProcess.makeDirectory()
        let program = try install(in: directory, library: damaged, at: "sbin/libsignupd-phone.so")
        let daemon = try refusedEverywhere(program, in: directory)
        #expect(daemon.log.contains("phone numbers cannot be checked: \(directory)/sbin/libsignupd-phone.so is damaged: loading it in a test process killed that process with signal"), "\(daemon.log)")
    }

    /// A shared object built from `source` with the toolchain's C compiler (Swift's own clang).
    private static func compiled(_ source: String, in directory: String, defines: [String] = []) throws -> Data {
        try source.write(toFile: "\(directory)/stub.c", atomically: true, encoding: .utf8)
        let compiler = Process()
        compiler.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        compiler.arguments = ["clang", "-shared", "-fPIC", "-o", "\(directory)/stub.so", "\(directory)/stub.c"] + defines
        try compiler.run()
        compiler.waitUntilExit()
        try #require(compiler.terminationStatus == 0, "clang could not build the stub library")
        return try Data(contentsOf: URL(fileURLWithPath: "\(directory)/stub.so"))
    }

    @Test("a library with the shim's two functions that answers wrongly (helper-30: every number became the account tel:) is refused")
    func wrongAnswers() throws {
        let directory = DaemonProcess.makeDirectory()
        let stub = try Self.compiled("""
            #include <stddef.h>
            int signupd_phone_parse(const char *t, const char *r, char *e, size_t n, int *d, int *i) { if (n) e[0] = 0; return 0; }
            int signupd_phone_region_is_known(const char *r) { return 1; }
            """, in: directory)
        let program = try install(in: directory, library: stub, at: "sbin/libsignupd-phone.so")
        let daemon = try refusedEverywhere(program, in: directory)
        #expect(daemon.log.contains("phone numbers cannot be checked: \(directory)/sbin/libsignupd-phone.so: it gives wrong answers for numbers whose answers are known"), "\(daemon.log)")
        #expect(!daemon.log.contains("user=tel:"))
    }

    @Test("where it is installed wins over a copy beside signupd (helper-31: a stray /usr/sbin copy survived a reinstall)")
    func installedPlaceFirst() throws {
        let directory = DaemonProcess.makeDirectory()
        let program = try install(in: directory, library: try Data(contentsOf: URL(fileURLWithPath: Self.library)), at: "lib/signupd/libsignupd-phone.so")
        try Data("not a library\n".utf8).write(to: URL(fileURLWithPath: "\(directory)/sbin/libsignupd-phone.so"))
        let daemon = DaemonProcess(directory: directory)
        try daemon.start(.systemd, program: program)
        #expect(try phoneStates(daemon, "138 0013 8000").first == "validating phone.checking")
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit() == 0)
        #expect(!daemon.log.contains("phone numbers cannot be checked"), "\(daemon.log)")
    }

    @Test("a library without the shim's functions is refused, and its code never runs in signupd, only in the trial's child (helper-30: its constructor ran in the daemon)")
    func foreignLibraryNeverRunsInSignupd() throws {
        let directory = DaemonProcess.makeDirectory()
        let marks = "\(directory)/constructor-ran-in"
        let stub = try Self.compiled("""
            #include <stdio.h>
            #include <unistd.h>
            __attribute__((constructor)) static void ran(void) { FILE *f = fopen(MARKS, "a"); if (f) { fprintf(f, "%d\\n", (int)getpid()); fclose(f); } }
            """, in: directory, defines: ["-DMARKS=\"\(marks)\""])
        let program = try install(in: directory, library: stub, at: "sbin/libsignupd-phone.so")
        let daemon = try refusedEverywhere(program, in: directory)
        #expect(daemon.log.contains("\(directory)/sbin/libsignupd-phone.so: it lacks signupd_phone_parse or signupd_phone_region_is_known"), "\(daemon.log)")
        let pids = try String(contentsOfFile: marks, encoding: .utf8).split(separator: "\n").compactMap { pid_t($0) }
        #expect(!pids.isEmpty, "the trial's child did not load it")
        #expect(!pids.contains(daemon.pid), "its constructor ran in signupd (pid \(daemon.pid)): \(pids)")
    }

    @Test(
        "a library others may write, or in a directory others may write (helper-28: loaded as it was), is refused as signupd's own files are",
        arguments: [
            ("sbin/libsignupd-phone.so", "sbin/libsignupd-phone.so", 0o666,
             "phone numbers cannot be checked: {dir}/sbin/libsignupd-phone.so: refusing it: it is writable by group or others (mode 0666); it may have been changed: put it back by reinstalling the package"),
            ("lib/signupd/libsignupd-phone.so", "lib/signupd", 0o777, "refusing {dir}/sbin/../lib/signupd: it is writable by group or others (mode 0777)"),
        ]
    )
    func writableByOthers(at place: String, madeWritable: String, mode: Int, says: String) throws {
        let directory = DaemonProcess.makeDirectory()
        let program = try install(in: directory, library: try Data(contentsOf: URL(fileURLWithPath: Self.library)), at: place)
        chmod("\(directory)/\(madeWritable)", mode_t(mode))
        let daemon = try refusedEverywhere(program, in: directory)
        #expect(daemon.log.contains(says.replacingOccurrences(of: "{dir}", with: directory)), "\(daemon.log)")
        // The remedy names the package file as it is called (helper-33: "signupd_VERSION_amd64.deb").
        #expect(daemon.log.contains("apt install --reinstall ./signupd_0.1.0_amd64.deb") && !daemon.log.contains("VERSION"), "\(daemon.log)")
    }

    /// The processes whose parent is `parent`.
    private static func children(of parent: pid_t) -> [pid_t] {
        ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).compactMap { entry -> pid_t? in
            guard let pid = pid_t(entry), let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")")
            else { return nil }
            // After "(comm) ": the state, then the parent's pid.
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            return fields.count > 1 && pid_t(fields[1]) == parent ? pid : nil
        }
    }

    /// A process's descriptors, as {fd: target}.
    private static func descriptors(of pid: pid_t) -> [Int32: String] {
        var held: [Int32: String] = [:]
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")) ?? [] {
            if let fd = Int32(entry), let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\(entry)") {
                held[fd] = target
            }
        }
        return held
    }

    /// signupd installed in `directory` with a library that never finishes loading (in every
    /// trial, or only the first): its initialiser says so by opening the FIFO `loading` for
    /// writing, then waits for ever. Opening `loading` for reading returns once a trial is there.
    private func hangingLibrary(in directory: String, firstTrialOnly: Bool) throws -> (program: String, loading: String) {
        let loading = "\(directory)/loading"
        try #require(mkfifo(loading, 0o600) == 0)
        let stub = try Self.compiled("""
            #include <fcntl.h>
            #include <unistd.h>
            __attribute__((constructor)) static void hang(void) {
                if ((!ONLY_FIRST || open(FIRST, O_WRONLY | O_CREAT | O_EXCL, 0600) >= 0) && open(LOADING, O_WRONLY) >= 0) for (;;) pause();
            }
            """, in: directory, defines: ["-DLOADING=\"\(loading)\"", "-DFIRST=\"\(directory)/first-trial\"", "-DONLY_FIRST=\(firstTrialOnly ? 1 : 0)"])
        return (try install(in: directory, library: stub, at: "sbin/libsignupd-phone.so"), loading)
    }

    /// signupd with `hangingLibrary`, started and caught in its first trial: the daemon, the
    /// program, the reading end of the FIFO (open while the trial hangs; the caller closes
    /// it) and the trial's pid.
    private func caughtInTrial(firstTrialOnly: Bool, _ activation: DaemonProcess.Activation) throws -> (daemon: DaemonProcess, program: String, inside: Int32, trial: pid_t) {
        let directory = DaemonProcess.makeDirectory()
        let (program, loading) = try hangingLibrary(in: directory, firstTrialOnly: firstTrialOnly)
        let daemon = DaemonProcess(directory: directory)
        try daemon.start(activation, program: program)
        // Returns once the trial (the warm-up's, just after start) is in that initialiser.
        let inside = open(loading, O_RDONLY | O_CLOEXEC)
        try #require(inside >= 0)
        let trials = Self.children(of: daemon.pid)
        try #require(trials.count == 1, "\(trials)")
        return (daemon, program, inside, trials[0])
    }

    @Test("the trial holds none of signupd's descriptors and dies with it: a signupd killed while a trial hangs leaves its socket to the next start (stop 39's CI: kill -9 found the socket 'already served')")
    func trialOutlivesNothing() throws {
        let (daemon, program, inside, trial) = try caughtInTrial(firstTrialOnly: false, .byHand)
        defer { close(inside) }
        #expect(((try? String(contentsOfFile: "/proc/\(trial)/cmdline", encoding: .utf8)) ?? "").contains("--phone-library-trial"))
        // Standard input, output and error, the answer pipe, the library's FIFO: none of
        // signupd's sockets (a fork held the listening socket and every connection).
        let held = Self.descriptors(of: trial)
        let daemons = Set(Self.descriptors(of: daemon.pid).filter { $0.key > 2 }.values)
        #expect(held[3]?.hasPrefix("pipe:") == true, "\(held)")
        let shared = held.filter { $0.key > 3 && daemons.contains($0.value) }
        #expect(shared.isEmpty, "the trial holds signupd's \(shared)")
        #expect(!held.contains { $0.key > 2 && $0.value.hasPrefix("socket:") }, "\(held)")
        // It ignores what systemd sends the whole service (helper-34: SIGHUP from `systemctl
        // kill` ended it and phone numbers were off until a restart), and is called signupd.
        let ignored = try #require(Self.signalMask("SigIgn", of: trial))
        for signal in [SIGHUP, SIGINT, SIGTERM, SIGUSR1, SIGUSR2] {
            #expect(ignored & (UInt64(1) << (signal - 1)) != 0, "signal \(signal) not ignored: \(String(ignored, radix: 16))")
        }
        #expect((try? String(contentsOfFile: "/proc/\(trial)/comm", encoding: .utf8)) == "signupd\n")
        daemon.signal(SIGKILL)
        _ = daemon.waitForExit()
        // The trial goes with it: its end of the FIFO closes (bounded: a trial left behind
        // fails here instead of hanging the suite).
        var ended = pollfd(fd: inside, events: Int16(POLLIN), revents: 0)
        #expect(poll(&ended, 1, 30_000) == 1, "the trial outlived the signupd that started it")
        var byte: UInt8 = 0
        #expect(read(inside, &byte, 1) == 0)
        // The next signupd finds the socket free: nothing of the killed one serves it. Its
        // own trial hangs too, and is stopped with it.
        let next = DaemonProcess(directory: daemon.directory)
        try next.start(.byHand, program: program)
        let client = try next.connect()
        #expect(try client.hello().string("event") == "hello")
        next.signal(SIGTERM)
        #expect(next.waitForExit() == 0)
        #expect(!next.log.contains("already serving"), "\(next.log)")
    }

    /// A mask line of /proc/PID/status ("SigIgn", "SigBlk"), as bits.
    private static func signalMask(_ name: String, of pid: pid_t) -> UInt64? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("\(name):") })
        else { return nil }
        return UInt64(line.dropFirst(name.count + 1).trimmingCharacters(in: .whitespaces), radix: 16)
    }

    @Test(
        "a trial ended or stopped from outside is not the library's fault: an error, not critical, and signupd tries again (helper-34: one signal left phone numbers off until a restart; helper-35: SIGSTOP until the 10 s ran out)",
        arguments: [(SIGKILL, "was ended from outside by signal 9 (Killed)"), (SIGSTOP, "was stopped from outside (SIGSTOP) and did not finish within 10 s")]
    )
    func trialEndedFromOutsideIsTriedAgain(signal: Int32, says: String) throws {
        // The first trial hangs in the initialiser; the next loads a library that is simply
        // not the phone library (refused, critical): proof that it was tried again.
        let (daemon, _, inside, trial) = try caughtInTrial(firstTrialOnly: true, .systemd)
        defer { close(inside) }
        kill(trial, signal)
        // The retry, a second after the first trial ended (stopped: its 10 s out), refuses
        // the library for what it is.
        let client = try daemon.connect()
        _ = try client.hello()
        var cause = ""
        for _ in 0..<300 where !cause.contains("lacks signupd_phone_parse") {
            try client.send(Request(.status))
            cause = try client.next("status")["phoneNumbers"]?.objectValue?.string("cause") ?? ""
            if !cause.contains("lacks") { usleep(100_000) }  // a bound on polling status, not a synchronisation
        }
        #expect(cause.contains("lacks signupd_phone_parse"), "\(cause)")
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit() == 0)
        let log = daemon.log
        #expect(log.contains("phone numbers cannot be checked yet: the process trying \(daemon.directory)/sbin/libsignupd-phone.so \(says)"), "\(log)")
        #expect(!log.contains("is damaged"), "\(log)")
        let critical = log.split(separator: "\n").filter { $0.contains("critical") }
        #expect(critical.count == 1 && critical[0].contains("lacks signupd_phone_parse"), "\(critical)")
    }

    @Test("a number typed while the first trial hangs is refused within a second, not held for the trial's 10 s with every connection of its event loop (helper-35)")
    func numberDuringAHangingTrial() throws {
        let (daemon, _, inside, trial) = try caughtInTrial(firstTrialOnly: false, .systemd)
        defer { close(inside) }
        let states = try phoneStates(daemon, "13800138000")
        #expect(states == ["failed phone.unavailable"], "\(states)")
        // Answered while the trial still hangs: its end of the FIFO is open, it is there.
        var ended = pollfd(fd: inside, events: Int16(POLLIN), revents: 0)
        #expect(poll(&ended, 1, 0) == 0, "the trial had ended: the answer waited for it")
        #expect(Self.children(of: daemon.pid) == [trial])
        let client = try daemon.connect()
        #expect(try client.hello().string("event") == "hello")
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit() == 0)
    }
}
