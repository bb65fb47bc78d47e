import Synchronization

/// One connection's hold on one session: the membership itself, in one object that both
/// sides keep. The connection lists its holds (the last one still held is its default
/// session); the session lists its holders, owner first, and fans its events out to them.
///
/// The two live on different event loops when a connection attaches to a session opened
/// on another loop. Ending is the one thing both must agree on, so it is the one shared
/// state: the session ends a hold on its own loop, and the connection sees it at once on
/// its own — no message to deliver, no list to keep in step.
final class SessionHold: Sendable {
    let session: Session
    let output: ConnectionOutput
    private let ended = Atomic<Bool>(false)

    init(_ session: Session, _ output: ConnectionOutput) {
        self.session = session
        self.output = output
    }

    /// The session closed, or this connection left it.
    var hasEnded: Bool { ended.load(ordering: .acquiring) }

    func end() { ended.store(true, ordering: .releasing) }
}
