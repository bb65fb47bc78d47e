import SignupProtocol
import Testing

/// The store-conformance suite for usernames: every pair of IdentityPair.all, on every
/// store, through the real daemon over its socket.
@Suite("One name, one account: every store, every pair")
struct IdentityPairsTests {
    static let password = "pair password 1"

    @Test("each pair is one account or a documented refusal", arguments: StoreUnderTest.allCases, IdentityPair.forThisRun)
    func pair(store: StoreUnderTest, pair: IdentityPair) throws {
        let client = try DaemonPerStore.get("pairs", store).connect()
        _ = try client.hello()
        let signedUp = try client.signup(pair.first, Self.password)
        try #require(signedUp["ok"] == .bool(true), "the first spelling signs up: \(signedUp)")
        #expect(signedUp.string("user") == pair.first)

        // Availability of the second spelling.
        let verdict = try client.signupVerdict(pair.second)
        #expect(verdict.string("state") == "failed")
        let expected = switch pair.outcome {
        case .sameAccount: IdentityPair.taken
        case .tooSimilar: IdentityPair.similar
        case .refusedByRule(let message): message
        }
        #expect(verdict.string("message") == expected)

        // Login with the second spelling.
        let login = try client.fillLogin(pair.second, Self.password)
        switch pair.outcome {
        case .sameAccount:
            #expect(login.enabled)
            let result = try client.submitForResult()
            #expect(result["ok"] == .bool(true), "the second spelling logs in to the first's account")
            #expect(result.string("user") == pair.first, "the name as typed at signup")
            let token = try #require(result.string("token"))
            try client.send(Request(id: .string("verify"), .verify(token: token)))
            let verified = try client.next("verified")
            #expect(verified.string("user") == pair.first)
        case .tooSimilar:
            #expect(login.enabled)
            let result = try client.submitForResult()
            #expect(result["ok"] == .bool(false))
            #expect(result.string("message") == "Invalid username or password")
        case .refusedByRule(let message):
            #expect(login.username.string("state") == "failed")
            #expect(login.username.string("message") == message)
            #expect(!login.enabled)
        }

        // And the first spelling still logs in, to the same account.
        let again = try client.login(pair.first, Self.password)
        #expect(again["ok"] == .bool(true))
        #expect(again.string("user") == pair.first)
    }

    @Test("the login limiter counts every spelling of a pair as one name", arguments: StoreUnderTest.allCases, IdentityPair.forThisRun)
    func limiter(store: StoreUnderTest, pair: IdentityPair) throws {
        let limit = 3
        let client = try DaemonPerStore.get("limiter", store, arguments: ["--login-attempts-per-minute", "\(limit)"]).connect()
        _ = try client.hello()
        let signedUp = try client.signup(pair.first, Self.password)
        try #require(signedUp["ok"] == .bool(true), "the first spelling signs up: \(signedUp)")

        // The attacker uses the other spelling of the same account. (A look-alike that is
        // not an account cannot log in to anyone: it need not share the account's count.)
        let secondSubmits = pair.outcome == .sameAccount
        let attempts = (0..<limit).map { $0.isMultiple(of: 2) && secondSubmits ? pair.second : pair.first }
        for name in attempts {
            let (_, enabled) = try client.fillLogin(name, "wrong password")
            try #require(enabled)
            let result = try client.submitForResult()
            #expect(result.string("message") == "Invalid username or password")
        }
        // Now no spelling gets another try, not even with the right password.
        let first = try client.login(pair.first, Self.password)
        #expect(first["ok"] == .bool(false))
        #expect(first.string("message") == "Too many attempts, try again later")
        switch pair.outcome {
        case .sameAccount:
            let second = try client.login(pair.second, Self.password)
            #expect(second.string("message") == "Too many attempts, try again later")
        case .tooSimilar:
            let second = try client.login(pair.second, Self.password)
            #expect(second["ok"] == .bool(false))
        case .refusedByRule:
            let (validation, enabled) = try client.fillLogin(pair.second, Self.password)
            #expect(validation.string("state") == "failed")
            #expect(!enabled)
        }
    }

    @Test("describe states the username rule precisely enough to pre-check it")
    func describeStatesTheRule() throws {
        let client = try SharedDaemon.client()
        try client.send(Request(id: .string("d"), .describe(locale: nil)))
        let description = try client.next("description")
        let forms = try #require(description["forms"]?.arrayValue)
        // The forms whose identity is a username (the phone forms have their own rule).
        for form in forms where form.objectValue?["fields"]?.arrayValue?.contains(where: { $0.objectValue?["kind"] == .string("username") }) == true {
            let fields = try #require(form.objectValue?["fields"]?.arrayValue)
            let username = try #require(fields.first { $0.objectValue?["name"] == .string("username") }?.objectValue)
            let rules = try #require(username["rules"]?.objectValue)
            #expect(rules["maxCharacters"] == .number("39"))
            #expect(rules["maxBytes"] == .number("255"))
            #expect(rules["normalization"] == .string("NFC"))
            #expect(rules["identity"] == .string("NFKC_Casefold"))
            #expect(rules["confusables"] == .string("UTS39-similarity-keys"))
            #expect(rules["maxInputBytes"] == .number("1020"))
            #expect(rules["appliesTo"] == .array([.string("NFC"), .string("NFKC_Casefold")]))
            #expect(rules["refusedCodePoints"] == .array([.string("U+0640")]))
            #expect(rules["maxMarksPerCharacter"] == .number("4"))
            #expect(rules["maxCodePointsPerCharacter"] == .number("8"))
            #expect(rules["bidiRule"] == .string("RFC5893"))
            // The linked ICU's (Debian 12: ICU 72, Unicode 15.0).
            #expect(rules["unicodeVersion"]?.stringValue?.wholeMatch(of: /[0-9]+\.[0-9]+/) != nil)
            #expect(rules["refusedProperties"] == .array([.string("Default_Ignorable_Code_Point")]))
            let password = try #require(fields.first { $0.objectValue?["name"] == .string("password") }?.objectValue?["rules"]?.objectValue)
            #expect(password["maxBytes"] == .number("4096"))
        }
    }
}

@Suite("Look-alike signups racing")
struct ConfusableRaceTests {
    @Test("two look-alike names submitted at once: one account, the other told why", arguments: StoreUnderTest.allCases, [
        ["ape", "\u{0430}\u{0440}\u{0435}"], ["raceab1", "raceabl"], ["RACEI", "racel"], ["PACEX", "\u{0420}\u{0410}\u{0421}\u{0415}\u{0425}"],
    ])
    func race(store: StoreUnderTest, names: [String]) throws {
        let daemon = try DaemonPerStore.get("race", store)
        var clients: [LineClient] = []
        // Both forms get "Username available" before either submits.
        for name in names {
            let client = try daemon.connect()
            _ = try client.hello()
            let verdict = try client.signupVerdict(name)
            try #require(verdict.string("state") == "ok")
            _ = try client.set("password", "race password")
            _ = try client.set("repeatedPassword", "race password")
            clients.append(client)
        }
        for client in clients { try client.send(Request(id: .string("submit"), .submit(session: nil))) }
        let results = try clients.map { try $0.next("result") }
        #expect(results.filter { $0["ok"] == .bool(true) }.count == 1, "\(results)")
        let loser = try #require(results.first { $0["ok"] == .bool(false) })
        #expect(loser.string("message") == "Username is too similar to an existing one")
    }
}
