import NIOCore
import NIOPosix

#if canImport(Glibc)
import Glibc
#endif

/// Which local peers may speak for others (`client` op): the uids an administrator names
/// (`--trusted-bridge-uid`) and the members of a group (`--trusted-bridge-group`; the
/// Debian package makes `signupd-bridges`, empty). Membership is the peer process's own
/// at connect time — its primary group or a supplementary one (`SO_PEERGROUPS`) — so
/// adding a web server's user to the group takes effect at its next start, as for files.
/// Administrators (`--admin-group`, issue 26) are recognised the same way: `Administrators`.
typealias Administrators = TrustedBridges

struct TrustedBridges: Sendable, Equatable {
    var uids: Set<UInt32> = []
    var gid: UInt32? = nil

    static let none = TrustedBridges()

    var isEmpty: Bool { uids.isEmpty && gid == nil }

    /// Whether the peer on `channel` is trusted.
    func trust(_ peer: PeerCredentials, on channel: Channel) -> Bool {
        if uids.contains(peer.uid) { return true }
        guard let gid else { return false }
        if peer.gid == gid { return true }
        return Self.supplementaryGroups(of: channel).contains(gid)
    }

    /// The peer's supplementary groups (`SO_PEERGROUPS`, Linux 4.13): up to 256 of them; a
    /// peer in more counts only by its primary group.
    private static func supplementaryGroups(of channel: Channel) -> [UInt32] {
        guard let provider = channel as? SocketOptionProvider else { return [] }
        let future: EventLoopFuture<PeerGroups> = provider.unsafeGetSocketOption(
            level: SocketOptionLevel(SOL_SOCKET), name: SocketOptionName(SO_PEERGROUPS)
        )
        // On the channel's own loop the future is already complete.
        var groups: [UInt32] = []
        future.assumeIsolated().whenSuccess { found in
            for index in found.gids.indices where found.gids[index] != 0 { groups.append(found.gids[index]) }
        }
        return groups
    }

    /// `getsockopt(SO_PEERGROUPS)`'s answer; unused places stay zero (NIO zeroes the
    /// buffer), and gid 0 is never a trusted group (`--trusted-bridge-group root` is refused).
    private struct PeerGroups {
        var gids = InlineArray<256, UInt32>(repeating: 0)
    }
}
