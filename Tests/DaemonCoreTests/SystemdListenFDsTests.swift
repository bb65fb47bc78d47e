import CSystemd
import Glibc
import Testing

@testable import SignupDaemonCore

/// LISTEN_PID, LISTEN_FDS and LISTEN_FDNAMES read as sd_listen_fds_with_names(3) reads them
/// (signupd reads them itself so that a start need not open libsystemd, issue 29).
@Suite struct SystemdListenFDsTests {
    typealias Passed = SystemdListenFDs.Passed

    @Test func namedDescriptorsFromThree() throws {
        let passed = try Passed.parse(pid: "4242", fds: "3", names: "signupd.socket:conn-1:state", ownPID: 4242, mostDescriptors: 1024)
        #expect(passed.map(\.fd) == [3, 4, 5])
        #expect(passed.map(\.name) == ["signupd.socket", "conn-1", "state"])
    }

    @Test func withoutNamesEachIsUnknown() throws {
        let passed = try Passed.parse(pid: "7", fds: "2", names: nil, ownPID: 7, mostDescriptors: 1024)
        #expect(passed.map(\.fd) == [3, 4])
        #expect(passed.map(\.name) == ["unknown", "unknown"])
        // Up to the descriptor limit: 3 to 1023 of 1,024.
        #expect(try Passed.parse(pid: "7", fds: "1021", names: nil, ownPID: 7, mostDescriptors: 1024).last?.fd == 1023)
    }

    @Test("nothing is passed to another process, or without the variables")
    func nothingPassed() throws {
        #expect(try Passed.parse(pid: "4243", fds: "1", names: "signupd.socket", ownPID: 4242, mostDescriptors: 1024).isEmpty)
        #expect(try Passed.parse(pid: nil, fds: "1", names: nil, ownPID: 4242, mostDescriptors: 1024).isEmpty)
        #expect(try Passed.parse(pid: "4242", fds: nil, names: nil, ownPID: 4242, mostDescriptors: 1024).isEmpty)
        #expect(try Passed.parse(pid: "4242", fds: "0", names: nil, ownPID: 4242, mostDescriptors: 1024).isEmpty)
    }

    @Test(arguments: [
        ("x42", "1", nil as String?, "LISTEN_PID=x42 is not a process id"),
        ("-1", "1", nil, "LISTEN_PID=-1 is not a process id"),
        ("0", "1", nil, "LISTEN_PID=0 is not a process id"),
        ("42", " 1", nil, "LISTEN_FDS= 1 is not a count"),
        ("42", "99999999999", nil, "LISTEN_FDS=99999999999 is not a count"),
        ("42", "2", "only-one", "LISTEN_FDNAMES names 1 descriptor, LISTEN_FDS=2"),
        ("42", "1", "a:b", "LISTEN_FDNAMES names 2 descriptors, LISTEN_FDS=1"),
        // Above the descriptor limit: refused before a name is made for each (a forged
        // 2,000,000,000 would have been an array of that many).
        ("42", "2000000000", nil, "LISTEN_FDS=2000000000 is more descriptors than this process may hold (1024)"),
        ("42", "1022", nil, "LISTEN_FDS=1022 is more descriptors than this process may hold (1024)"),
    ])
    func malformedIsRefused(pid: String, fds: String, names: String?, reason: String) {
        #expect(throws: Passed.Malformed(reason: reason)) { try Passed.parse(pid: pid, fds: fds, names: names, ownPID: 42, mostDescriptors: 1024) }
    }

    @Test("a stored descriptor is of the kind its name says: the state a memory file, a connection a connected Unix stream socket")
    func storedKinds() throws {
        typealias Kind = SystemdListenFDs.Kind
        var pair: [Int32] = [0, 0]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0)
        defer { pair.forEach { close($0) } }
        #expect(Kind.connection.matches(pair[0]))
        #expect(!Kind.memory.matches(pair[0]))
        let memory = csystemd_sealed_memfd("test", "x", 1)
        #expect(memory >= 0)
        defer { close(memory) }
        #expect(Kind.memory.matches(memory))
        #expect(!Kind.connection.matches(memory))
        // What a forged LISTEN_FDS can name: a device or directory of the process's own, a
        // pipe, nothing.
        for path in ["/dev/null", "/"] {
            let own = open(path, O_RDONLY)
            defer { close(own) }
            #expect(!Kind.connection.matches(own) && !Kind.memory.matches(own), "\(path)")
        }
        var pipeEnds: [Int32] = [0, 0]
        #expect(pipe(&pipeEnds) == 0)
        defer { pipeEnds.forEach { close($0) } }
        #expect(!Kind.connection.matches(pipeEnds[0]) && !Kind.memory.matches(pipeEnds[0]))
        #expect(!Kind.connection.matches(999_999) && !Kind.memory.matches(999_999))
    }

    @Test("JOURNAL_STREAM counts only when it names stderr's device and inode")
    func journalStream() {
        var status = stat()
        #expect(fstat(2, &status) == 0)
        #expect(JournalStream.isStandardError("\(status.st_dev):\(status.st_ino)"))
        #expect(!JournalStream.isStandardError("\(status.st_dev):\(status.st_ino &+ 1)"))
        #expect(!JournalStream.isStandardError("garbage"))
        #expect(!JournalStream.isStandardError("0:0"))
        #expect(!JournalStream.isStandardError("\(status.st_dev):\(status.st_ino):1"))
        #expect(!JournalStream.isStandardError(nil))
    }

    @Test("only a listening Unix stream socket is taken as the listener")
    func listenerKind() throws {
        var pair: [Int32] = [0, 0]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0)
        defer { pair.forEach { close($0) } }
        // Connected, not listening.
        #expect(!SystemdListenFDs.isListeningUnixStream(pair[0]))
        let listening = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(listening) }
        // Bound to an address the kernel picks (autobind: the family alone), then listening.
        var family = sockaddr_un()
        family.sun_family = sa_family_t(AF_UNIX)
        let bound = withUnsafePointer(to: &family) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listening, $0, socklen_t(MemoryLayout<sa_family_t>.size)) }
        }
        #expect(bound == 0)
        #expect(listen(listening, 1) == 0)
        #expect(SystemdListenFDs.isListeningUnixStream(listening))
        let datagram = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        defer { close(datagram) }
        #expect(!SystemdListenFDs.isListeningUnixStream(datagram))
        let tcp = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(tcp) }
        #expect(listen(tcp, 1) == 0)
        #expect(!SystemdListenFDs.isListeningUnixStream(tcp))
        // Not a socket at all.
        var pipeEnds: [Int32] = [0, 0]
        #expect(pipe(&pipeEnds) == 0)
        defer { pipeEnds.forEach { close($0) } }
        #expect(!SystemdListenFDs.isListeningUnixStream(pipeEnds[0]))
    }
}
