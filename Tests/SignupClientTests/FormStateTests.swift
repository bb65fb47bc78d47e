import SignupProtocol
import Testing

@testable import SignupClient

@Suite("FormState: the view model's rules as a value")
struct FormStateTests {
    static let form = FormDescription(
        name: "signup",
        fields: [.init(name: "username", secret: false, label: "Username"), .init(name: "password", secret: true, label: "Password")],
        submitLabel: "Sign up")

    static func validation(_ seq: UInt64, _ field: String, _ state: ValidationState, session: String = "s", id: String = "") -> ServerEvent {
        .session(session: session, seq: seq, .validation(field: field, state: state, message: LocalizedMessage(id: id, text: id)), id: nil)
    }

    @Test("an answer older than one applied is dropped, as flatMapLatest drops a superseded one")
    func staleDropped() {
        var state = FormState(form: Self.form)
        state.session = "s"
        #expect(state.apply(Self.validation(5, "username", .validating)) != nil)
        #expect(state.apply(Self.validation(7, "username", .ok, id: "username.available")) != nil)
        // A late verdict for an earlier value, and a repeat: no change, no output.
        #expect(state.apply(Self.validation(6, "username", .failed, id: "username.taken")) == nil)
        #expect(state.apply(Self.validation(7, "username", .failed, id: "username.taken")) == nil)
        #expect(state.fields["username"]?.messageId == "username.available")
        #expect(state.lastSeq == 7)
    }

    @Test("events of other sessions and events the library does not know change nothing")
    func othersIgnored() {
        var state = FormState(form: Self.form)
        state.session = "s"
        #expect(state.apply(Self.validation(1, "username", .ok, session: "other")) == nil)
        #expect(state.apply(.unknown(UnknownServerEvent(event: "launched", members: JSONObject()))) == nil)
        #expect(state.apply(.closed(session: "other", reason: "idle", id: nil)) == nil)
        #expect(state.fields["username"]?.state == .empty)
        #expect(state.apply(.closed(session: "s", reason: "idle", id: nil)) == FormChange(seq: nil, .closed(reason: "idle")))
    }

    @Test("readiness: ready when enabled, waiting while a check runs, else blocked by the first field not ok")
    func readiness() {
        var state = FormState(form: Self.form)
        state.session = "s"
        state.apply(Self.validation(1, "username", .validating))
        #expect(state.readiness == .waiting)
        state.apply(Self.validation(2, "username", .failed, id: "username.taken"))
        guard case .blocked(let field, let validation) = state.readiness else {
            Issue.record("not blocked: \(state.readiness)")
            return
        }
        #expect(field.name == "username" && validation.messageId == "username.taken")
        state.apply(Self.validation(3, "username", .ok))
        state.apply(Self.validation(4, "password", .ok))
        #expect(state.readiness == .waiting)  // all ok, `enabled` not yet said
        state.apply(.session(session: "s", seq: 5, .enabled(true), id: nil))
        #expect(state.readiness == .ready)
    }
}

@Suite("ConnectionCore: replies, events and the end")
struct ConnectionCoreTests {
    static func message(_ text: String) -> ServerMessage {
        ServerMessage(line: Array(text.utf8))!
    }

    @Test("a reply is the first line carrying its id that is not a validation it caused, nor an event the library cannot read")
    func answers() {
        let id = RequestID.integer(3)
        #expect(!Self.message(#"{"event":"validation","session":"s","seq":1,"id":3,"field":"f","state":"empty","message":"","messageId":"","params":{}}"#).answers(id))
        #expect(!Self.message(#"{"event":"launched","id":3}"#).answers(id))
        #expect(!Self.message(#"{"event":"pong","id":4}"#).answers(id))
        #expect(Self.message(#"{"event":"busy","session":"s","seq":2,"id":3,"value":true}"#).answers(id))
        #expect(Self.message(#"{"event":"error","code":"brand_new","message":"m","id":3}"#).answers(id))
        #expect(Self.message(#"{"event":"error","code":"brand_new","message":"m","id":3}"#).refusal?.code == .unknown("brand_new"))
        // A known event with a member it cannot read is kept, as .unknown, not a failure.
        #expect(Self.message(#"{"event":"enabled","session":"s","seq":"x"}"#).event.isUnknown)
    }

    @Test("a line that answers nothing goes to the readers; the end finishes them and refuses new ones")
    func routing() {
        var core = ConnectionCore(eventBufferLimit: 4)
        // The greeting comes before anything else.
        #expect(core.received(Self.message(#"{"event":"hello","protocol":"signup/1","server":"x","forms":[],"limits":{"maxLineBytes":1,"maxSessionsPerConnection":1,"maxOutputBytes":1}}"#)).deliver == nil)
        let id = core.makeID()
        #expect(id == .integer(1))
        let reader = ConnectionCore.Subscriber(yield: { _ in true }, finish: {})
        #expect(core.subscribe(reader) != nil)
        let event = core.received(Self.message(#"{"event":"closed","session":"s"}"#))
        #expect(event.deliver?.subscribers.count == 1 && event.replies.isEmpty)
        let end = core.channelEnded()
        #expect(end.ended?.0 == .disconnected && end.finish.count == 1 && end.closeChannel)
        // After the end, nothing more is delivered and a new reader is refused.
        #expect(core.received(Self.message(#"{"event":"pong"}"#)).deliver == nil)
        #expect(core.subscribe(reader) == nil)
    }

    @Test("bye reaches the readers, then ends the connection as that bye; the close after it changes nothing")
    func bye() {
        var core = ConnectionCore(eventBufferLimit: 4)
        _ = core.received(Self.message(#"{"event":"hello","protocol":"signup/1","server":"x","forms":[],"limits":{"maxLineBytes":1,"maxSessionsPerConnection":1,"maxOutputBytes":1}}"#))
        _ = core.subscribe(ConnectionCore.Subscriber(yield: { _ in true }, finish: {}))
        let bye = core.received(Self.message(#"{"event":"bye","reason":"shutdown"}"#))
        #expect(bye.deliver?.subscribers.count == 1 && bye.finish.count == 1)
        #expect(bye.ended?.0 == .bye(reason: "shutdown") && bye.closeChannel)
        #expect(core.channelEnded().ended == nil)
    }
}
