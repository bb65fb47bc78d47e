import FormEngine
import NIOCore
import SignupProtocol

/// What operators ask (issue 26): `status` and `signups` (pause); `sessions` with `all` is
/// `listSessions`'s.
extension ConnectionHandler {
    /// Root and members of `--admin-group`, on their own connection: never a front end's
    /// named client (a web visitor speaks through the bridge's uid, not as it).
    func isAdministrator(_ output: ConnectionOutput) -> Bool {
        output.principal.client == nil && shared.administrators.trust(output.peer, on: output.channel)
    }

    func status(id: RequestID?, output: ConnectionOutput) {
        output.deliver(.status(report: StatusReport.build(context: shared, caller: output.principal, administrator: isAdministrator(output)), id: id))
    }

    /// `signups`: the state; with `pause`, an administrator changes it for every host.
    func signups(pause: Bool?, message: String?, id: RequestID?, output: ConnectionOutput) throws(RequestFailure) {
        let state = shared.services.signupPause
        guard let pause else {
            return output.deliver(.signups(Self.wire(state.current), id: id))
        }
        guard isAdministrator(output) else { throw .administratorsOnly(pause ? "pausing sign-up" : "resuming sign-up") }
        // Blank words are no words: the form then says `signup.paused`.
        let note = message.map { $0.trimmingWhitespace }.flatMap { $0.isEmpty ? nil : $0 }
        let wanted = pause ? StoredSignupPause(note: note, since: Int64(wallClockSeconds()), byUID: output.peer.uid) : nil
        let logger = shared.logger
        let who = output.principal.logMetadata(pid: output.peer.pid)
        answerWhenStoreAnswers(output.eventLoop.makeFutureWithLoopTask { try await state.set(wanted) }, id: id, output: output) { _ throws(RequestFailure) in
            logger.notice(pause ? "sign-up paused by an administrator" : "sign-up resumed by an administrator", metadata: who)
            output.deliver(.signups(Self.wire(state.current), id: id))
        }
    }

    static func wire(_ pause: StoredSignupPause?) -> SignupsState {
        guard let pause else { return SignupsState(paused: false) }
        return SignupsState(paused: true, message: pause.note, since: Int(pause.since), byUID: Int(pause.byUID))
    }
}

extension String {
    /// Without leading and trailing white space (Unicode's).
    fileprivate var trimmingWhitespace: String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !$0.properties.isWhitespace }),
            let last = scalars.lastIndex(where: { !$0.properties.isWhitespace })
        else { return "" }
        return String(scalars[first...last])
    }
}
