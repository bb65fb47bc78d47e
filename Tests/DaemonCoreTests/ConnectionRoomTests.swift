import NIOCore
import NIOEmbedded
import Testing
@testable import SignupDaemonCore

/// When every connection slot is taken, a uid holding fewer still gets in: one connection
/// of the uid holding the most is counted out and closed with `bye displaced`.
@Suite struct ConnectionRoomTests {
    private func output(uid: UInt32) -> ConnectionOutput {
        ConnectionOutput(channel: EmbeddedChannel(), peer: PeerCredentials(pid: 1, uid: uid, gid: uid))
    }

    /// No connect budget here: any fixed time will do.
    private static let now = NIODeadline.uptimeNanoseconds(1)

    @Test func aFullDaemonAdmitsAUIDHoldingFewerByDisplacingTheBiggestHolder() {
        let registry = ConnectionRegistry(maxConnections: 5, maxConnectionsPerUID: 3)
        var held: [ConnectionOutput] = []
        for uid: UInt32 in [1000, 1000, 1000, 1001, 1001] {
            let connection = output(uid: uid)
            guard case .admitted = registry.admit(connection, uid: uid, now: Self.now) else { Issue.record("not admitted"); return }
            held.append(connection)
        }
        #expect(registry.connectionCount == 5)
        // uid 1001 holds 2, the biggest 3: not two fewer, so refused (no swapping back and forth).
        guard case .tooManyConnections = registry.admit(output(uid: 1001), uid: 1001, now: Self.now) else { Issue.record("1001 admitted"); return }
        // Root, holding none, gets in: one of uid 1000's is counted out.
        guard case .admittedDisplacing(let victim, let victimUID, let count) = registry.admit(output(uid: 0), uid: 0, now: Self.now) else {
            Issue.record("root was not admitted")
            return
        }
        #expect(victimUID == 1000 && count == 3)
        #expect(held.prefix(3).contains { $0 === victim })
        #expect(registry.connections(of: UInt32(1000)) == 2 && registry.connections(of: UInt32(0)) == 1 && registry.connectionCount == 5)
        // Its close later does not count it out twice.
        registry.remove(victim, key: 1000)
        #expect(registry.connections(of: UInt32(1000)) == 2 && registry.connectionCount == 5)
        // Now the biggest holders have 2 each: a uid with 1 (root) is refused; one with none is not.
        guard case .tooManyConnections = registry.admit(output(uid: 0), uid: 0, now: Self.now) else { Issue.record("root admitted twice"); return }
        guard case .admittedDisplacing = registry.admit(output(uid: 1002), uid: 1002, now: Self.now) else { Issue.record("1002 not admitted"); return }
        #expect(registry.connectionCount == 5)
    }

    @Test func aUIDAtItsOwnLimitDisplacesNobody() {
        let registry = ConnectionRegistry(maxConnections: 4, maxConnectionsPerUID: 2)
        for uid: UInt32 in [1, 1, 2, 2] { _ = registry.admit(output(uid: uid), uid: uid, now: Self.now) }
        guard case .tooManyConnections = registry.admit(output(uid: 1), uid: 1, now: Self.now) else { Issue.record("uid 1 admitted"); return }
        #expect(registry.connections(of: UInt32(1)) == 2 && registry.connections(of: UInt32(2)) == 2)
    }

    /// A front end's visitors each hold a connection or two: none is the biggest holder, but
    /// the front end's uid is, so a local user still gets in and a visitor's connection goes.
    @Test func aFullDaemonCountsAFrontEndAsOneHolderToo() {
        let registry = ConnectionRegistry(maxConnections: 6, maxConnectionsPerUID: 4, maxConnectionsPerClient: 2, maxConnectionsPerBridge: 6)
        var visitors: [ConnectionOutput] = []
        for index in 0..<6 {
            let connection = output(uid: 33)
            guard case .admitted = registry.admit(connection, uid: 33, bridge: true, now: Self.now) else { Issue.record("bridge not admitted"); return }
            let key = PeerKey(uid: 33, client: .id("visitor-\(index / 2)"))
            #expect(registry.name(connection, from: PeerKey(uid: 33), to: key, now: Self.now) == .named)
            visitors.append(connection)
        }
        guard case .admittedDisplacing(let victim, let victimKey, let held) = registry.admit(output(uid: 1000), uid: 1000, now: Self.now) else {
            Issue.record("the local user was not admitted"); return
        }
        #expect(victimKey.uid == 33 && held == 6 && visitors.contains { $0 === victim })
        #expect(registry.connectionCount == 6 && registry.connections(of: UInt32(1000)) == 1)
    }
}
