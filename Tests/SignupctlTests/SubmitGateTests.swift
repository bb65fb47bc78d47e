import SignupProtocol
import Testing

@testable import signupctl

@Suite("When the interactive form submits")
struct SubmitGateTests {
    @Test("an enabled event already on its way after an accepted submit sends nothing")
    func staleEnabledAfterAccept() {
        var gate = SubmitGate()
        do { let action = gate.enter(); #expect(action == .submit) }
        gate.sent(.integer(3))
        // The daemon had flipped enabled before it read the submit; that event arrives first.
        do { let action = gate.enabled(true); #expect(action == .none) }
        gate.busy(true, id: .integer(3))
        do { let action = gate.enabled(false); #expect(action == .none) }
        gate.result()
        // enabled comes back after the result: still nothing.
        do { let action = gate.enabled(true); #expect(action == .none) }
        #expect(!gate.pending)
    }

    @Test("not_ready while a check runs: exactly one retry, on enabled")
    func oneRetry() {
        var gate = SubmitGate()
        do { let action = gate.enter(); #expect(action == .submit) }
        gate.sent(.integer(3))
        do { let action = gate.error(code: .notReady, id: .integer(3), checksRunning: true); #expect(action == .wait) }
        do { let action = gate.enter(); #expect(action == .none) }  // Enter again while waiting: the first one stands
        do { let action = gate.enabled(true); #expect(action == .submit) }
        gate.sent(.integer(4))
        do { let action = gate.enabled(true); #expect(action == .none) }
        gate.busy(true, id: .integer(4))
        do { let action = gate.enabled(true); #expect(action == .none) }
        gate.result()
        do { let action = gate.enabled(true); #expect(action == .none) }
    }

    @Test("Enter while a submit is unanswered or running sends nothing")
    func enterTwice() {
        var gate = SubmitGate()
        do { let action = gate.enter(); #expect(action == .submit) }
        gate.sent(.integer(1))
        do { let action = gate.enter(); #expect(action == .none) }
        gate.busy(true, id: .integer(1))
        do { let action = gate.enter(); #expect(action == .none) }
        gate.result()
        do { let action = gate.enter(); #expect(action == .submit) }
    }

    @Test("not_ready with nothing running, another request's error, an edit, a failed check")
    func refusals() {
        var gate = SubmitGate()
        _ = gate.enter()
        gate.sent(.integer(1))
        do { let action = gate.error(code: .unknownField, id: .integer(9), checksRunning: false); #expect(action == .none) }
        do { let action = gate.error(code: .notReady, id: .integer(1), checksRunning: false); #expect(action == .refused) }
        #expect(!gate.pending)

        _ = gate.enter()
        gate.sent(.integer(2))
        gate.edited()
        do { let action = gate.error(code: .notReady, id: .integer(2), checksRunning: true); #expect(action == .refused) }
        do { let action = gate.enabled(true); #expect(action == .none) }

        _ = gate.enter()
        gate.sent(.string("x"))
        do { let action = gate.error(code: .notReady, id: .string("x"), checksRunning: true); #expect(action == .wait) }
        do { let failed = gate.checkFailed(); #expect(failed) }
        do { let action = gate.enabled(true); #expect(action == .none) }
    }

    @Test("a busy event caused by another request does not count as ours")
    func busyOfAnother() {
        var gate = SubmitGate()
        _ = gate.enter()
        gate.sent(.integer(5))
        gate.busy(true, id: nil)
        #expect(gate.state == .unanswered(.integer(5), retry: true))
    }
}

@Suite("Line-mode prompt input")
struct LineInputTests {
    static func feed(_ text: String, secret: Bool) -> (echo: String, answer: PasswordPrompt.Answer?) {
        var line = LineInput(secret: secret)
        var echo = ""
        for byte in Array(text.utf8) {
            let step = line.feed(byte)
            echo += step.echo
            if let answer = step.answer { return (echo, answer) }
        }
        return (echo, nil)
    }

    @Test("Tab, Enter and newline end a field", arguments: ["bob\t", "bob\r", "bob\n"])
    func ends(_ input: String) {
        #expect(Self.feed(input, secret: false).answer == .text("bob"))
    }

    @Test("a secret is never echoed; plain text is, and Backspace erases a whole character")
    func echo() {
        let secret = Self.feed("s3cré\u{7F}t\t", secret: true)
        #expect(secret.echo == "" && secret.answer == .text("s3crt"))
        let plain = Self.feed("ué\u{7F}x\r", secret: false)
        #expect(plain.echo == "ué\u{08} \u{08}x" && plain.answer == .text("ux"))
    }

    @Test("Ctrl-C interrupts, Ctrl-D on an empty line ends input, arrows type nothing")
    func controls() {
        #expect(Self.feed("ab\u{03}", secret: false).answer == .interrupted)
        #expect(Self.feed("\u{04}", secret: false).answer == .endOfInput)
        #expect(Self.feed("a\u{04}\u{1B}[Db\r", secret: false).answer == .text("ab"))
        #expect(Self.feed("abc\u{15}d\r", secret: true).answer == .text("d"))
    }
}
