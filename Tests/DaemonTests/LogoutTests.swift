import SignupProtocol
import Testing

/// `logout` revokes a token in the store: `verify` refuses it from the reply on, on every
/// store (and, PostgreSQL being shared, on every host: Tests/postgres/several_hosts.py).
@Suite("logout revokes a login token")
struct LogoutTests {
    @Test("logout then verify is invalid_token; a second logout says the token is gone", arguments: StoreUnderTest.allCases)
    func revokes(store: StoreUnderTest) throws {
        let client = try DaemonPerStore.get("logout", store).connect()
        _ = try client.hello()
        let name = "logout\(UInt32.random(in: 0...UInt32.max))"
        #expect(try client.signup(name, "logout password")["ok"] == .bool(true))
        let first = try #require(try client.login(name, "logout password").string("token"))
        let second = try #require(try client.login(name, "logout password").string("token"))

        try client.send(Request(id: .string("out"), .logout(token: first)))
        let revoked = try client.next(where: { $0.string("id") == "out" }).match
        #expect(revoked.string("event") == "revoked", "\(revoked)")
        try client.send(Request(id: .string("v1"), .verify(token: first)))
        let refused = try client.next(where: { $0.string("id") == "v1" }).match
        #expect(refused.string("event") == "error" && refused.string("code") == "invalid_token", "\(refused)")
        // Only that token: the same user's other session still verifies.
        try client.send(Request(id: .string("v2"), .verify(token: second)))
        #expect(try client.next(where: { $0.string("id") == "v2" }).match.string("user") == name)
        try client.send(Request(id: .string("again"), .logout(token: first)))
        let again = try client.next(where: { $0.string("id") == "again" }).match
        #expect(again.string("code") == "invalid_token", "\(again)")
        try client.send(Request(id: .string("junk"), .logout(token: "not a token")))
        #expect(try client.next(where: { $0.string("id") == "junk" }).match.string("code") == "invalid_token")
    }
}
