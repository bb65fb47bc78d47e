import NIOHTTP1
import SignupProtocol
import Testing
@testable import SignupWebCore

/// Who may open the WebSocket or post, how fast a WebSocket's messages are taken, and what
/// signupd would refuse as too long.
@Suite struct PolicyTests {
    private let policy = OriginPolicy(allowed: ["https://partner.example"], alwaysHTTPS: false)

    private func headers(_ pairs: [(String, String)]) -> HTTPHeaders { HTTPHeaders(pairs) }

    @Test func theWebSocketOpensOnlyFromThePagesOwnOrigin() {
        #expect(policy.allowsWebSocket(headers([("Host", "signup.example:8443"), ("Origin", "https://signup.example:8443")]), https: true))
        #expect(!policy.allowsWebSocket(headers([("Host", "signup.example:8443"), ("Origin", "http://signup.example:8443")]), https: true))
        #expect(!policy.allowsWebSocket(headers([("Host", "signup.example"), ("Origin", "https://signup.example.evil")]), https: true))
        #expect(!policy.allowsWebSocket(headers([("Host", "signup.example")]), https: true))  // no Origin: no
        #expect(policy.allowsWebSocket(headers([("Host", "signup.example"), ("Origin", "https://partner.example")]), https: true))
    }

    @Test func aPostFromAnotherSiteIsRefusedWhateverItsCookies() {
        #expect(!policy.allowsPost(headers([("Host", "a.example"), ("Origin", "https://evil.example")]), https: true))
        #expect(!policy.allowsPost(headers([("Host", "a.example"), ("Origin", "null")]), https: true))
        #expect(!policy.allowsPost(headers([("Host", "a.example"), ("Sec-Fetch-Site", "cross-site")]), https: true))
        #expect(!policy.allowsPost(headers([("Host", "a.example"), ("Sec-Fetch-Site", "same-site")]), https: true))
        #expect(policy.allowsPost(headers([("Host", "a.example"), ("Origin", "https://a.example")]), https: true))
        #expect(policy.allowsPost(headers([("Host", "a.example"), ("Sec-Fetch-Site", "same-origin")]), https: true))
        #expect(policy.allowsPost(headers([("Host", "a.example")]), https: true))  // curl: the CSRF token decides
    }

    @Test func aFloodIsPacedNotRefused() {
        let start = ContinuousClock.now
        var budget = FrameBudget(perSecond: 50, burst: 200, now: start)
        for _ in 0..<200 { #expect(budget.take(now: start) == .zero) }
        #expect(budget.take(now: start) == .milliseconds(20))  // one token's time at 50 a second
        #expect(budget.take(now: start) == .milliseconds(40))
        // A person who pauses gets the burst back, up to its size.
        #expect(budget.take(now: start + .seconds(60)) == .zero)
        for _ in 0..<199 { #expect(budget.take(now: start + .seconds(60)) == .zero) }
        #expect(budget.take(now: start + .seconds(60)) > .zero)
    }

    @Test func aLineSignupdWouldRefuseIsAnsweredAsSignupdWould() throws {
        guard case .forward(let line) = RelayRules.fromBrowser(Array(#"{"op":"set","field":"username","value":"\#(String(repeating: "x", count: 100))","id":9}"#.utf8)) else {
            Issue.record("not forwarded")
            return
        }
        #expect(RelayRules.fitting(line, maxLineBytes: 1000) == .forward(line))
        guard case .answer(let answer) = RelayRules.fitting(line, maxLineBytes: 100) else {
            Issue.record("forwarded although too long")
            return
        }
        #expect(answer["code"] == .string("line_too_long") && answer["id"] == .number("9"))
    }
}
