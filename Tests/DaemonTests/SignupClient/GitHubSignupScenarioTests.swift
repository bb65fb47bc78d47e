import SignupClient
import SignupProtocol
import Testing

/// The upstream RxSwift GitHubSignup example, replayed through `SignupForm` against the real
/// daemon, in the shape of its marble test: usernames typed while availability answers are
/// in flight (u1 taken, u2, u3 free), a password, a repetition that first differs (p2) and
/// then matches (p1), then a tap. What the test expects of the outputs:
///
///     validatedUsername  empty, validating…, then only u3's verdict (stale answers dropped)
///     signupEnabled      false until all three are valid, then true
///     signingIn          true, then false around
///     signedIn           exactly one result
@Suite("SignupClient: the GitHubSignup scenario", .timeLimit(.minutes(3)))
struct GitHubSignupScenarioTests {
    @Test("outputs arrive in the order the RxSwift marble test expects")
    func marble() async throws {
        let daemon = try SharedDaemon.get()
        let taken = uniqueName("taken")
        let setup = try SharedDaemon.client()
        #expect(try setup.signup(taken, "pass word")["ok"] == .bool(true))

        let form = try await SignupForm.open("signup", socket: daemon.socketPath)
        // Driver semantics: a field's output starts with its current value.
        var usernames = form.validations(of: "username").makeAsyncIterator()
        #expect(await usernames.next()?.state == .empty)
        let changes = form.changes()

        // u1 (taken), u2 (a prefix of u3, typed on), u3 (free): sent back to back, so that
        // the earlier answers are superseded while they run.
        let free = uniqueName("free")
        try await form.set("username", to: taken)
        try await form.set("username", to: String(free.prefix(6)))
        try await form.set("username", to: free)
        try await form.settle()
        try await waitUntil(form) { $0.fields["username"]?.state != .validating }
        try await form.set("password", to: "pass word")
        try await form.set("repeatedPassword", to: "pass wore")  // p2: differs
        try await form.settle()
        #expect(form.state.enabled == false)
        try await form.set("repeatedPassword", to: "pass word")  // p1: matches
        try await form.settle()
        #expect(form.state.enabled == true)
        try await form.submit()
        try await waitUntil(form) { $0.result != nil && !$0.busy }
        await form.close()

        let seen = await everyChange(changes)

        // validatedUsername: after the last `validating`, exactly one verdict, u3's: no answer
        // for u1 or u2 arrives once u3 is being checked.
        let username = seen.compactMap { if case .validation(let v) = $0.kind, v.field == "username" { v } else { nil } }
        let lastChecking = try #require(username.lastIndex { $0.state == .validating }, "\(username)")
        #expect(username[(lastChecking + 1)...].map(\.state) == [.ok], "\(username)")
        #expect(username.last?.messageId == "username.available")

        // signupEnabled: true only once all three are ok, and not before the repetition matched.
        let enabledAt = try #require(seen.firstIndex { $0.kind == .enabled(true) }, "\(seen)")
        var fields: [String: ValidationState] = [:]
        for change in seen[..<enabledAt] {
            if case .validation(let v) = change.kind { fields[v.field] = v.state }
        }
        #expect(fields == ["username": .ok, "password": .ok, "repeatedPassword": .ok], "\(fields)")
        let mismatch = try #require(seen.firstIndex {
            if case .validation(let v) = $0.kind { v.field == "repeatedPassword" && v.state == .failed } else { false }
        })
        #expect(mismatch < enabledAt)

        // signingIn true, then the one result, then signingIn false.
        let busyTrue = try #require(seen.firstIndex { $0.kind == .busy(true) })
        let results = seen.indices.filter { if case .result = seen[$0].kind { true } else { false } }
        let busyFalse = try #require(seen.lastIndex { $0.kind == .busy(false) })
        #expect(results.count == 1, "\(seen)")
        #expect(enabledAt < busyTrue && busyTrue < results[0] && results[0] < busyFalse, "\(seen)")
        guard case .result(let result) = seen[results[0]].kind else { return }
        #expect(result.ok && result.user == free && result.messageId == "signup.done")

        // The @Observable model shows the same final state.
        let model = await SignupFormModel(form)
        await model.run()  // the form has ended: run returns at once
        #expect(await model.result?.ok == true)
        #expect(await model.validation("username").messageId == "username.available")
        #expect(await model.enabled == form.state.enabled)
    }

    @Test("a locale switch re-renders the messages, and attach follows the same session")
    func localeAndAttach() async throws {
        let daemon = try SharedDaemon.get()
        let form = try await SignupForm.open("signup", socket: daemon.socketPath)
        try await form.set("password", to: "abc")
        try await form.settle()
        #expect(form.state.fields["password"]?.messageId == "password.too_short")
        let english = try #require(form.state.fields["password"]?.message)

        let monitor = try await SignupForm.attach(session: form.session, socket: daemon.socketPath)
        #expect(monitor.state.fields["password"]?.messageId == "password.too_short")

        try await form.switchLocale(to: "zh-CN")
        #expect(form.state.locale == "zh-CN")
        #expect(form.state.fields["password"]?.messageId == "password.too_short")
        #expect(form.state.fields["password"]?.message != english)
        let snapshot = try await form.snapshot()
        #expect(snapshot.fields["password"]?.params.contains { $0.name == "min" } == true)
        try await waitUntil(monitor) { $0.locale == "zh-CN" }
        await monitor.close()
        await form.close()
    }

    @Test("inputs from any AsyncSequence: a text field's values and a button's taps")
    func sequences() async throws {
        let daemon = try SharedDaemon.get()
        let form = try await SignupForm.open("signup", socket: daemon.socketPath)
        let name = uniqueName("typed")
        // A text field: one value per keystroke.
        let (typed, keys) = AsyncStream.makeStream(of: String.self)
        for end in name.indices.dropFirst() { keys.yield(String(name[..<end])) }
        keys.yield(name)
        keys.finish()
        try await form.bind("username", to: typed)
        try await form.bind("password", to: AsyncStream { $0.yield("pass word"); $0.finish() })
        // A tap while submit is not enabled is skipped, as a disabled button's would be.
        try await form.bindSubmits(AsyncStream { $0.yield(()); $0.finish() })
        #expect(form.state.result == nil)
        try await form.bind("repeatedPassword", to: AsyncStream { $0.yield("pass word"); $0.finish() })
        try await waitUntil(form) { $0.enabled }
        try await form.bindSubmits(AsyncStream { $0.yield(()); $0.finish() })
        try await waitUntil(form) { $0.result != nil }
        #expect(form.state.result?.ok == true && form.state.result?.user == name)
        await form.close()
    }
}
