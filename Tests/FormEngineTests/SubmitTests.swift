import FormEngine
import SignupProtocol
import Testing

@Suite("Submit, busy and results")
struct SubmitTests {
    /// A signup session with every field valid and the name checked available.
    private func readySignup(username: String = "alice") throws -> FormSession {
        var session = FormSession(form: .signup)
        let step = try session.handle(.set(field: "username", value: username), now: .zero)
        guard case .startCheck(let id, _, _)? = step.effects.first else {
            Issue.record("no check started")
            return session
        }
        _ = try session.handle(.availability(check: id, .available), now: .zero)
        _ = try session.handle(.set(field: "password", value: "s3cret!"), now: .zero)
        _ = try session.handle(.set(field: "repeatedPassword", value: "s3cret!"), now: .zero)
        return session
    }

    @Test("submit while not enabled is not_ready and changes nothing")
    func notReady() throws {
        var session = FormSession(form: .signup)
        _ = try session.handle(.set(field: "password", value: "s3cret!"), now: .zero)
        let before = session
        #expect(throws: FormError.notReady) { try session.handle(.submit, now: .zero) }
        #expect(session == before)
    }

    @Test("enabled only when all three are ok")
    func enabledNeedsAll() throws {
        var session = try readySignup()
        #expect(session.enabled)
        let step = try session.handle(.set(field: "repeatedPassword", value: "s3cret"), now: .zero)
        #expect(step.events.last == .enabled(false))
    }

    @Test("a signup: busy, effect with the values at submit, result, busy false, finished")
    func signupFlow() throws {
        var session = try readySignup()
        let submit = try session.handle(.submit, now: .zero)
        #expect(submit.events == [.busy(true), .enabled(false)])
        #expect(submit.effects == [.submit(.signup, identity: IdentityValue(.username, "alice"), password: "s3cret!")])
        // Edits during busy are validated as usual but cannot enable submit.
        let edit = try session.handle(.set(field: "password", value: "x"), now: .zero)
        #expect(edit.events.textOnly == [
            .validation(field: "password", state: .failed, message: "Password must be at least 5 characters"),
            .validation(field: "repeatedPassword", state: .failed, message: "Password different"),
        ])
        #expect(throws: FormError.notReady) { try session.handle(.submit, now: .zero) }
        let done = try session.handle(.submitCompleted(.signedUp(user: "alice")), now: .zero)
        #expect(done.events.textOnly == [.result(ok: true, message: "Signed up", user: "alice", token: nil), .busy(false)])
        #expect(session.finished)
        #expect(throws: FormError.finished) { try session.handle(.set(field: "username", value: "bob"), now: .zero) }
        #expect(throws: FormError.finished) { try session.handle(.submit, now: .zero) }
    }

    @Test("a lost race for the name reports taken, on the result and the field")
    func lostRace() throws {
        var session = try readySignup()
        _ = try session.handle(.submit, now: .zero)
        let done = try session.handle(.submitCompleted(.usernameTaken), now: .zero)
        #expect(done.events.textOnly == [
            .result(ok: false, message: "Username already taken", user: nil, token: nil),
            .validation(field: "username", state: .failed, message: "Username already taken"),
            .busy(false),
        ])
        #expect(!session.finished)
        #expect(!session.enabled)
    }

    @Test("a failed store leaves the form enabled for a retry")
    func storeFailure() throws {
        var session = try readySignup()
        _ = try session.handle(.submit, now: .zero)
        let done = try session.handle(.submitCompleted(.storeUnavailable), now: .zero)
        #expect(done.events.textOnly == [
            .result(ok: false, message: "Account store unavailable, try again later", user: nil, token: nil),
            .busy(false), .enabled(true),
        ])
    }

    @Test("a completion nobody asked for is ignored")
    func strayCompletion() throws {
        var session = FormSession(form: .signup)
        #expect(try session.handle(.submitCompleted(.signedUp(user: "x")), now: .zero) == FormStep())
        #expect(!session.finished)
    }

    @Test("the state survives a Codable round trip mid-check")
    func codable() throws {
        var session = FormSession(form: .signup)
        _ = try session.handle(.set(field: "username", value: "erin"), now: .zero)
        let data = try JSONEncoderShim.roundTrip(session)
        #expect(data == session)
        var restored = data
        let step = try restored.handle(.availability(check: 1, .available), now: .zero)
        #expect(step.events.textOnly == [.validation(field: "username", state: .ok, message: "Username available")])
    }
}

@Suite("Login form rules")
struct LoginTests {
    private func readyLogin() throws -> FormSession {
        var session = FormSession(form: .login)
        _ = try session.handle(.set(field: "username", value: "alice"), now: .zero)
        _ = try session.handle(.set(field: "password", value: "x"), now: .zero)
        return session
    }

    @Test("username has the same rules and no check; password only needs a value")
    func rules() throws {
        var session = FormSession(form: .login)
        let bad = try session.handle(.set(field: "username", value: "a_b"), now: .zero)
        #expect(bad.events.textOnly == [.validation(field: "username", state: .failed, message: "Username can only contain letters or digits")])
        let good = try session.handle(.set(field: "username", value: "ab"), now: .zero)
        #expect(good.effects.isEmpty)
        #expect(good.events.textOnly == [.validation(field: "username", state: .ok, message: "Username valid")])
        let password = try session.handle(.set(field: "password", value: "x"), now: .zero)
        #expect(password.events.textOnly == [.validation(field: "password", state: .ok, message: "Password entered"), .enabled(true)])
    }

    @Test("login results", arguments: [
        (SubmitOutcome.loggedIn(user: "alice", token: "tok"), SessionEvent.result(ok: true, message: "Logged in", user: "alice", token: "tok")),
        (.invalidCredentials, .result(ok: false, message: "Invalid username or password", user: nil, token: nil)),
        (.rateLimited, .result(ok: false, message: "Too many attempts, try again later", user: nil, token: nil)),
    ])
    func results(_ outcome: SubmitOutcome, _ expected: SessionEvent) throws {
        var session = try readyLogin()
        let submit = try session.handle(.submit, now: .zero)
        #expect(submit.effects == [.submit(.login, identity: IdentityValue(.username, "alice"), password: "x")])
        let done = try session.handle(.submitCompleted(outcome), now: .zero)
        #expect(done.events.first?.textOnly == expected)
        #expect(done.events.dropFirst().first == .busy(false))
        if case .loggedIn = outcome { #expect(session.finished) } else { #expect(session.enabled) }
    }
}
