import FormEngine
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import Testing
@testable import SignupDaemonCore

#if canImport(Glibc)
import Glibc
#endif

/// The availability client's pool against a one-connection HTTP service on a real socket:
/// a kept-alive connection left unused is closed after the idle timeout, so a connection a
/// middlebox dropped silently during a long pause is not the next check's.
@Suite struct AvailabilityPoolTests {
    /// Listens on 127.0.0.1, answers one request 404 (kept alive), then tells whether the
    /// client closed the connection within `within` seconds.
    private final class OneShotService: @unchecked Sendable {
        let listener: Int32
        let port: Int

        init() throws {
            let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let bound = withUnsafeMutablePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { generic in
                    bind(listener, generic, length) == 0 && listen(listener, 4) == 0 && getsockname(listener, generic, &length) == 0
                }
            }
            guard bound else { throw POSIXError(.EADDRNOTAVAIL) }
            self.listener = listener
            port = Int(UInt16(bigEndian: address.sin_port))
        }

        /// Starts serving at once, on a thread of its own (not a task: the test runner's
        /// cooperative threads may all be busy with other tests for longer than the client's
        /// timeout): "closed" when the client closed the connection in time, else what happened.
        func serveOnce(within seconds: Int, answering promise: EventLoopPromise<String>) {
            Thread { [self] in
                defer { close(listener) }
                let connection = accept(listener, nil, nil)
                guard connection >= 0 else { return promise.succeed("accept failed") }
                defer { close(connection) }
                var request = [UInt8]()
                var buffer = [UInt8](repeating: 0, count: 4096)
                while !String(decoding: request, as: UTF8.self).contains("\r\n\r\n") {
                    let count = read(connection, &buffer, buffer.count)
                    guard count > 0 else { return promise.succeed("no request") }
                    request += buffer[..<count]
                }
                let answer = Array("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n".utf8)
                _ = write(connection, answer, answer.count)
                var limit = timeval(tv_sec: seconds, tv_usec: 0)
                setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
                let waited = ContinuousClock.now
                let count = read(connection, &buffer, buffer.count)
                let error = errno
                promise.succeed(count == 0 ? "closed" : count < 0 ? "no close: errno \(error) after \(ContinuousClock.now - waited)" : "another request")
            }.start()
        }
    }

    @Test func anIdleKeptAliveConnectionIsClosedAfterTheIdleTimeout() async throws {
        let service = try OneShotService()
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let served = group.next().makePromise(of: String.self)
        service.serveOnce(within: 10, answering: served)
        let client = HTTPAvailabilityClient(
            template: try AvailabilityURLTemplate("http://127.0.0.1:\(service.port)/users/{key}"), timeout: .seconds(5),
            idleTimeout: .milliseconds(200), group: group
        )
        let answer = try await client.check(username: "bob", key: "bob", peer: 1000, cancellation: CheckCancellation(), on: group.next()).get()
        #expect(answer == .available)
        // Kept alive for the next check, then closed by the client once idle for 200 ms.
        let outcome = try await served.futureResult.get()
        #expect(outcome == "closed", "the service saw: \(outcome)")
        await client.shutdown()
        try await group.shutdownGracefully()
    }

    /// A service that reads each request and never answers: every connection stays busy.
    private final class HungService: @unchecked Sendable {
        let service: OneShotService
        let requests = NIOLockedValueBox<[String]>([])
        let received = DispatchSemaphore(value: 0)

        init() throws { service = try OneShotService() }

        func serve() {
            Thread { [self] in
                while true {
                    let connection = accept(service.listener, nil, nil)
                    // `stop` shut the listener down: this thread closes it, so that its
                    // number cannot be reused under a later accept (a parallel test's).
                    guard connection >= 0 else {
                        close(service.listener)
                        return
                    }
                    Thread { [self] in
                        defer { close(connection) }
                        var request = [UInt8]()
                        var buffer = [UInt8](repeating: 0, count: 4096)
                        while !String(decoding: request, as: UTF8.self).contains("\r\n\r\n") {
                            let count = read(connection, &buffer, buffer.count)
                            guard count > 0 else { return }
                            request += buffer[..<count]
                        }
                        let path = String(decoding: request, as: UTF8.self).split(separator: " ").dropFirst().first.map(String.init) ?? "?"
                        requests.withLockedValue { $0.append(path) }
                        received.signal()
                        // Hung: holds the connection until the client closes it.
                        while read(connection, &buffer, buffer.count) > 0 {}
                    }.start()
                }
            }.start()
        }

        /// Wakes the accepting thread, which closes the listener.
        func stop() { shutdown(service.listener, Int32(SHUT_RDWR)) }
    }

    @Test func oneUIDsChecksAgainstAHungServiceLeaveHalfThePoolToOthers() async throws {
        let service = try HungService()
        service.serve()
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let client = HTTPAvailabilityClient(
            template: try AvailabilityURLTemplate("http://127.0.0.1:\(service.service.port)/users/{key}"), timeout: .seconds(30),
            maxConnections: 4, group: group
        )
        #expect(client.maxConnectionsPerUID == 2)
        // uid 1000 asks four times first, then uid 1001 once.
        var checks: [EventLoopFuture<Availability>] = []
        for name in ["a1", "a2", "a3", "a4", "b1"] {
            checks.append(client.check(username: name, key: name, peer: name.hasPrefix("a") ? 1000 : 1001, cancellation: CheckCancellation(), on: group.next()))
        }
        // Three requests reach the service: two of uid 1000's (its half), and uid 1001's,
        // which did not wait behind the others. (First come, first served, the first three
        // would all be uid 1000's, and uid 1001's would wait for one of them to end.)
        for _ in 0..<3 { #expect(service.received.wait(timeout: .now() + 20) == .success) }
        let paths = service.requests.withLockedValue { $0 }
        #expect(paths.filter { $0.hasPrefix("/users/a") }.count == 2)
        #expect(paths.contains("/users/b1"))
        await client.shutdown()
        for check in checks { #expect(try await check.get() == .unreachable) }
        try await group.shutdownGracefully()
        service.stop()
    }
}
