import FormEngine
import SignupProtocol
import Testing

/// The RxSwift GitHubSignup view-model marble test, replayed on the engine.
@Suite("RxSwift marble test on a virtual clock")
struct MarbleTests {
    @Test("username, password and enabled streams match the upstream marbles")
    func upstreamMarbles() throws {
        var harness = VirtualClockHarness(form: .signup)
        harness.answers = ["verysecret": .taken, "secretuser": .unreachable, "secretusername": .available]
        let inputs: [(Int, String, String)] = [
            (0, "username", ""), (0, "password", ""), (0, "repeatedPassword", ""),
            (4, "username", "verysecret"), (10, "username", "secretuser"), (17, "username", "secretusername"),
            (23, "password", "huge secret"),
            (28, "repeatedPassword", "secret"), (33, "repeatedPassword", "huge secret"),
        ]
        for (tick, field, value) in inputs {
            harness.advance(to: tick)
            try harness.send(.set(field: field, value: value))
        }
        harness.advance(to: 40)

        let username = harness.validations(of: "username").map { "\($0.1.rawValue)@\($0.0)" }
        #expect(username == ["empty@0", "validating@4", "failed@7", "validating@10", "failed@13", "validating@17", "ok@20"])
        let messages = harness.validations(of: "username").map(\.2)
        #expect(messages[2] == "Username already taken")
        #expect(messages[4] == "Error contacting server")
        #expect(messages[6] == "Username available")
        #expect(harness.enabledChanges.map { "\($0.1)@\($0.0)" } == ["false@0", "true@33"])
        let repeated = harness.validations(of: "repeatedPassword").map { "\($0.1.rawValue)@\($0.0)" }
        #expect(repeated == ["empty@0", "failed@28", "ok@33"])
    }

    @Test("a stale check is never emitted: changes at 4 and 6 give one ok at 9, nothing at 7")
    func staleCheckIsDropped() throws {
        for deliverCancelled in [false, true] {
            var harness = VirtualClockHarness(form: .signup)
            harness.deliverCancelledAnswers = deliverCancelled
            harness.advance(to: 4)
            try harness.send(.set(field: "username", value: "first"))
            harness.advance(to: 6)
            try harness.send(.set(field: "username", value: "second"))
            harness.advance(to: 12)
            let states = harness.validations(of: "username").map { "\($0.1.rawValue)@\($0.0)" }
            // "validating" again at 6 is no change, so it is not sent.
            #expect(states == ["empty@0", "validating@4", "ok@9"])
            #expect(!harness.log.contains { $0.tick == 7 })
            let started = harness.effects.filter { if case .startCheck = $0.effect { true } else { false } }
            let cancelled = harness.effects.filter { if case .cancelCheck = $0.effect { true } else { false } }
            #expect(started.count == 2)
            #expect(cancelled.map(\.tick) == [6])
        }
    }
}
