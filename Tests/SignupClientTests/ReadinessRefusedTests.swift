import SignupProtocol
import Testing

@testable import SignupClient

/// Readiness when signupd keeps submit off with every field ok and says why with a failed
/// result: sign-up paused by the operator (issue 26).
@Suite("FormState readiness: refused")
struct ReadinessRefusedTests {
    static let form = FormDescription(
        name: "signup",
        fields: [.init(name: "username", secret: false, label: "Username"), .init(name: "password", secret: true, label: "Password")],
        submitLabel: "Sign up")

    static let pausedMessage = LocalizedMessage(id: "signup.paused_note", params: [.init("note", .string("back soon"))], text: "Sign-up is paused: back soon")
    static let pausedResult = FormResult(ok: false, message: "Sign-up is paused: back soon", messageId: "signup.paused_note", params: [.init("note", .string("back soon"))])

    /// A state whose every field is ok, `enabled` not (yet) said.
    static func allOK() -> FormState {
        var state = FormState(form: form)
        state.session = "s"
        state.apply(validation(1, "username", .ok))
        state.apply(validation(2, "password", .ok))
        return state
    }

    static func validation(_ seq: UInt64, _ field: String, _ state: ValidationState) -> ServerEvent {
        .session(session: "s", seq: seq, .validation(field: field, state: state, message: LocalizedMessage(id: "", text: "")), id: nil)
    }

    static func event(_ seq: UInt64, _ event: SessionEvent) -> ServerEvent {
        .session(session: "s", seq: seq, event, id: nil)
    }

    @Test("all ok, not enabled, not busy, the last result failed: refused, with that result")
    func refusedWhenPaused() {
        var state = Self.allOK()
        state.apply(Self.event(3, .result(ok: false, message: Self.pausedMessage, user: nil, token: nil)))
        state.apply(Self.event(4, .enabled(false)))
        #expect(state.readiness == .refused(Self.pausedResult))
    }

    @Test("all ok and no result yet: waiting (enabled not said)")
    func waitingWithoutResult() {
        let state = Self.allOK()
        #expect(state.result == nil)
        #expect(state.readiness == .waiting)
    }

    @Test("enabled: ready, whatever the last result said")
    func readyWhenEnabled() {
        var state = Self.allOK()
        state.apply(Self.event(3, .result(ok: false, message: Self.pausedMessage, user: nil, token: nil)))
        #expect(state.readiness == .refused(Self.pausedResult))
        // Resumed: signupd enables submit again.
        state.apply(Self.event(4, .enabled(true)))
        #expect(state.readiness == .ready)
    }

    @Test("an ok result is not a refusal")
    func okResultIsNotRefused() {
        var state = Self.allOK()
        state.apply(Self.event(3, .result(ok: true, message: LocalizedMessage(id: "signup.done", text: "Signed up"), user: "alice", token: nil)))
        #expect(state.readiness == .waiting)
    }

    @Test("busy: waiting, even after a failed result")
    func busyWaits() {
        var state = Self.allOK()
        state.apply(Self.event(3, .result(ok: false, message: Self.pausedMessage, user: nil, token: nil)))
        state.apply(Self.event(4, .busy(true)))
        #expect(state.readiness == .waiting)
        state.apply(Self.event(5, .busy(false)))
        #expect(state.readiness == .refused(Self.pausedResult))
    }

    @Test("a check running: waiting, even after a failed result")
    func validatingWaits() {
        var state = Self.allOK()
        state.apply(Self.event(3, .result(ok: false, message: Self.pausedMessage, user: nil, token: nil)))
        state.apply(Self.validation(4, "username", .validating))
        #expect(state.readiness == .waiting)
    }

    @Test("a field not ok blocks before the failed result refuses")
    func blockedBeatsRefused() {
        var state = Self.allOK()
        state.apply(Self.event(3, .result(ok: false, message: Self.pausedMessage, user: nil, token: nil)))
        state.apply(.session(session: "s", seq: 4, .validation(field: "password", state: .failed, message: LocalizedMessage(id: "password.too_short", text: "Too short")), id: nil))
        guard case .blocked(let field, let validation) = state.readiness else {
            Issue.record("not blocked: \(state.readiness)")
            return
        }
        #expect(field.name == "password")
        #expect(validation.messageId == "password.too_short")
    }
}
