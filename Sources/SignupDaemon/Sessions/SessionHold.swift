import Synchronization

/// One connection's hold on one session: the membership itself, in one object that both
/// sides keep. The connection lists its holds (the last one still held is its default
/// session); the session lists its holders, owner first, and fans its events out to them.
///
/// The two live on different event loops when a connection attaches to a session opened
/// on another loop. Ending is the one thing both must agree on, so it is the one shared
/// state: the session ends its owner's hold at once, and an attached connection's right
/// after that connection's `closed` (on its own loop, in order with its events) — no
/// list to keep in step.
final class SessionHold: Sendable {
    let session: Session
    let output: ConnectionOutput
    /// The opener's hold: its leaving ends the session.
    let isOwner: Bool
    private let ended = Atomic<Bool>(false)

    init(_ session: Session, _ output: ConnectionOutput, isOwner: Bool) {
        self.session = session
        self.output = output
        self.isOwner = isOwner
    }

    /// The session closed, or this connection left it.
    var hasEnded: Bool { ended.load(ordering: .acquiring) }

    func end() { ended.store(true, ordering: .releasing) }
}
