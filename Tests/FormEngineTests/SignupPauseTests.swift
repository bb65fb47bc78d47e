import FormEngine
import SignupProtocol
import Testing

/// Sign-up paused by the operator (issue 26): `.signupsPaused` as a form session sees it.
@Suite("Sign-up paused by the operator")
struct SignupPauseTests {
    /// A signup session with every field valid and the name checked available.
    private func readySignup(locale: String = "en") throws -> FormSession {
        var session = FormSession(form: .signup, locale: locale)
        let step = try session.handle(.set(field: "username", value: "alice"), now: .zero)
        let check = try #require(step.effects.compactMap { effect -> UInt64? in
            if case .startCheck(let id, _, _) = effect { return id }
            return nil
        }.first)
        _ = try session.handle(.availability(check: check, .available), now: .zero)
        _ = try session.handle(.set(field: "password", value: "s3cret!"), now: .zero)
        _ = try session.handle(.set(field: "repeatedPassword", value: "s3cret!"), now: .zero)
        #expect(session.enabled)
        return session
    }

    private func readyLogin() throws -> FormSession {
        var session = FormSession(form: .login)
        _ = try session.handle(.set(field: "username", value: "alice"), now: .zero)
        _ = try session.handle(.set(field: "password", value: "x"), now: .zero)
        #expect(session.enabled)
        return session
    }

    private static let paused = LocalizedMessage(id: "signup.paused", text: "Sign-up is paused, try again later")

    private static func pausedNote(_ note: String, _ text: String) -> LocalizedMessage {
        LocalizedMessage(id: "signup.paused_note", params: [.init("note", .string(note))], text: text)
    }

    private static func result(_ message: LocalizedMessage) -> SessionEvent {
        .result(ok: false, message: message, user: nil, token: nil)
    }

    @Test("pausing a ready signup: a failed result signup.paused, then enabled false")
    func pauseWithoutNote() throws {
        var session = try readySignup()
        let step = try session.handle(.signupsPaused(SignupPause(note: nil)), now: .zero)
        #expect(step.events == [Self.result(Self.paused), .enabled(false)])
        #expect(step.effects.isEmpty)
        #expect(!session.enabled)
        #expect(session.paused == SignupPause(note: nil))
        // Every field is still ok: only the pause keeps submit off.
        #expect(session.validations.allSatisfy { $0.state == .ok })
        #expect(!session.busy && !session.finished)
    }

    @Test("an empty note reads as no note")
    func emptyNote() throws {
        var session = try readySignup()
        let step = try session.handle(.signupsPaused(SignupPause(note: "")), now: .zero)
        #expect(step.events == [Self.result(Self.paused), .enabled(false)])
    }

    @Test("the operator's note, in English and Chinese", arguments: [
        ("en", "Sign-up is paused: back at 14:00 UTC"),
        ("zh-CN", "注册已暂停：back at 14:00 UTC"),
    ])
    func pauseWithNote(_ locale: String, _ text: String) throws {
        var session = try readySignup(locale: locale)
        let step = try session.handle(.signupsPaused(SignupPause(note: "back at 14:00 UTC")), now: .zero)
        #expect(step.events == [Self.result(Self.pausedNote("back at 14:00 UTC", text)), .enabled(false)])
    }

    @Test("pausing a form not ready says why and announces no change of enabled")
    func pauseNotReady() throws {
        var session = FormSession(form: .signup)
        let step = try session.handle(.signupsPaused(SignupPause(note: nil)), now: .zero)
        #expect(step.events == [Self.result(Self.paused)])
        #expect(!session.enabled)
    }

    @Test("resuming a ready form enables submit again; resuming one not ready changes nothing shown")
    func resume() throws {
        var ready = try readySignup()
        _ = try ready.handle(.signupsPaused(SignupPause(note: "x")), now: .zero)
        let resumed = try ready.handle(.signupsPaused(nil), now: .zero)
        #expect(resumed.events == [.enabled(true)])
        #expect(ready.enabled)
        #expect(ready.paused == nil)
        let submit = try ready.handle(.submit, now: .zero)
        #expect(submit.effects == [.submit(.signup, identity: IdentityValue(.username, "alice"), password: "s3cret!")])

        var blank = FormSession(form: .signup)
        _ = try blank.handle(.signupsPaused(SignupPause(note: nil)), now: .zero)
        #expect(try blank.handle(.signupsPaused(nil), now: .zero) == FormStep())
        #expect(!blank.enabled)
    }

    @Test("fields filled in while paused are validated as usual, but submit stays off until resumed")
    func editingWhilePaused() throws {
        var session = FormSession(form: .signup)
        _ = try session.handle(.signupsPaused(SignupPause(note: nil)), now: .zero)
        let step = try session.handle(.set(field: "username", value: "alice"), now: .zero)
        guard case .startCheck(let check, _, _)? = step.effects.first else {
            Issue.record("no check started: \(step.effects)")
            return
        }
        _ = try session.handle(.availability(check: check, .available), now: .zero)
        _ = try session.handle(.set(field: "password", value: "s3cret!"), now: .zero)
        let last = try session.handle(.set(field: "repeatedPassword", value: "s3cret!"), now: .zero)
        #expect(session.validations.allSatisfy { $0.state == .ok })
        #expect(!last.events.contains(.enabled(true)))
        #expect(!session.enabled)
        #expect(try session.handle(.signupsPaused(nil), now: .zero).events == [.enabled(true)])
    }

    @Test("submit while paused gets the paused result again and starts nothing, ready or not", arguments: [true, false])
    func submitWhilePaused(_ ready: Bool) throws {
        var session = ready ? try readySignup() : FormSession(form: .signup)
        _ = try session.handle(.signupsPaused(SignupPause(note: "maintenance")), now: .zero)
        let before = session
        let step = try session.handle(.submit, now: .zero)
        #expect(step.events == [Self.result(Self.pausedNote("maintenance", "Sign-up is paused: maintenance"))])
        #expect(step.effects.isEmpty)
        #expect(!session.busy)
        #expect(session == before)
        #expect(session.paused == before.paused)
    }

    @Test("snapshot while paused ends with the paused result; without a pause it has none")
    func snapshot() throws {
        var session = try readySignup()
        let plain = session.snapshot()
        #expect(!plain.contains { if case .result = $0 { true } else { false } })
        #expect(plain.last == .busy(false))

        _ = try session.handle(.signupsPaused(SignupPause(note: "soon")), now: .zero)
        let events = session.snapshot()
        #expect(events.last == Self.result(Self.pausedNote("soon", "Sign-up is paused: soon")))
        #expect(events.contains(.enabled(false)))
        #expect(Array(events.dropLast()) == plain.map { $0 == .enabled(true) ? .enabled(false) : $0 })
    }

    @Test("switching locale while paused re-renders the paused result")
    func localeWhilePaused() throws {
        var session = try readySignup()
        _ = try session.handle(.signupsPaused(SignupPause(note: "soon")), now: .zero)
        let step = try session.handle(.setLocale("zh-CN"), now: .zero)
        #expect(step.events.last == Self.result(Self.pausedNote("soon", "注册已暂停：soon")))
    }

    @Test("a login form ignores the pause: no events, enabled unchanged, submit still runs")
    func loginIgnores() throws {
        var session = try readyLogin()
        #expect(try session.handle(.signupsPaused(SignupPause(note: "x")), now: .zero) == FormStep())
        #expect(session.enabled)
        #expect(session.paused == nil)
        #expect(!session.snapshot().contains { if case .result = $0 { true } else { false } })
        let submit = try session.handle(.submit, now: .zero)
        #expect(submit.effects.count == 1)
        guard case .submit(.login, _, _)? = submit.effects.first else {
            Issue.record("no login submitted: \(submit.effects)")
            return
        }
    }

    @Test("the same pause applied twice says nothing the second time; a new note is told")
    func twice() throws {
        var session = try readySignup()
        let first = try session.handle(.signupsPaused(SignupPause(note: "a")), now: .zero)
        #expect(first.events.count == 2)
        #expect(try session.handle(.signupsPaused(SignupPause(note: "a")), now: .zero) == FormStep())
        let changed = try session.handle(.signupsPaused(SignupPause(note: "b")), now: .zero)
        #expect(changed.events == [Self.result(Self.pausedNote("b", "Sign-up is paused: b"))])
        // Resuming twice: the second says nothing either.
        #expect(try session.handle(.signupsPaused(nil), now: .zero).events == [.enabled(true)])
        #expect(try session.handle(.signupsPaused(nil), now: .zero) == FormStep())
    }

    @Test("paused while a signup runs: nothing said then; a paused outcome keeps submit off")
    func pausedWhileSubmitting() throws {
        var session = try readySignup()
        _ = try session.handle(.submit, now: .zero)
        #expect(session.busy)
        #expect(try session.handle(.signupsPaused(SignupPause(note: nil)), now: .zero) == FormStep())
        let done = try session.handle(.submitCompleted(.signupsPaused(note: nil)), now: .zero)
        #expect(done.events == [Self.result(Self.paused), .busy(false)])
        #expect(!session.enabled)
        #expect(session.lastResult?.message.id == "signup.paused")
    }

    // A paused form's last word is the pause, never an older failed result: a client's
    // FormState.readiness would otherwise report `.refused` with that older result
    // ("Account store unavailable, try again later") while the real reason is the pause.

    @Test("switching locale while paused, after an earlier failed result, ends with the paused result")
    func localeAfterEarlierResultWhilePaused() throws {
        var session = try readySignup()
        _ = try session.handle(.submit, now: .zero)
        _ = try session.handle(.submitCompleted(.storeUnavailable), now: .zero)
        #expect(session.enabled)
        _ = try session.handle(.signupsPaused(SignupPause(note: "soon")), now: .zero)
        let step = try session.handle(.setLocale("zh-CN"), now: .zero)
        let results = step.events.filter { if case .result = $0 { true } else { false } }
        #expect(results.contains(Self.result(Self.pausedNote("soon", "注册已暂停：soon"))))
        #expect(results.last == Self.result(Self.pausedNote("soon", "注册已暂停：soon")))
    }

    @Test("paused while a signup runs and the store then fails: the form is told it is paused")
    func pausedWhileSubmittingThenStoreFails() throws {
        var session = try readySignup()
        _ = try session.handle(.submit, now: .zero)
        _ = try session.handle(.signupsPaused(SignupPause(note: nil)), now: .zero)
        let done = try session.handle(.submitCompleted(.storeUnavailable), now: .zero)
        #expect(!session.enabled)
        #expect(done.events.contains(.busy(false)))
        // The failure, then the pause: the last result is what stands.
        let results = done.events.filter { if case .result = $0 { true } else { false } }
        #expect(results.last == Self.result(Self.paused))
    }

    @Test("the pause is the host's state: not encoded, not compared")
    func notStored() throws {
        let ready = try readySignup()
        var session = ready
        _ = try session.handle(.signupsPaused(SignupPause(note: "x")), now: .zero)
        #expect(session.paused != nil)
        #expect(session == ready)
        let restored = try JSONEncoderShim.roundTrip(session)
        #expect(restored.paused == nil)
        #expect(restored == session)
        // The next process applies its own: restored without one, the form is ready.
        #expect(restored.enabled)
    }
}
