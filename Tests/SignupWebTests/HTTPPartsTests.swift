import NIOCore
import Testing
@testable import SignupWebCore

/// Cookies, form bodies, the language, the address behind a proxy, claims and per-address limits.
@Suite struct HTTPPartsTests {
    @Test func cookiesAreReadAndWritten() {
        let cookies = Cookies.parse(["a=1; signupd_flow=abc", "b = 2;a=3"])
        #expect(cookies == ["a": "1", "signupd_flow": "abc", "b": "2"])
        #expect(Cookies.set("t", "v", secure: true) == "t=v; Path=/; SameSite=Strict; HttpOnly; Secure")
        #expect(Cookies.clear("t", secure: false) == "t=; Path=/; SameSite=Strict; HttpOnly; Max-Age=0")
    }

    @Test func formBodiesAreDecoded() {
        #expect(FormBody.parse(Array("username=%E6%9D%8E+x&password=a%26b&empty=&username=second".utf8)) == ["username": "李 x", "password": "a&b", "empty": ""])
        #expect(FormBody.parse(Array("bad=%zz".utf8)) == nil)
        #expect(FormBody.parse(Array("bad=%".utf8)) == nil)
        #expect(FormBody.parse(Array("bad=%FF".utf8)) == nil)  // not UTF-8
    }

    @Test func theLanguageIsChosen() {
        #expect(LocaleChoice.negotiate("zh-CN,zh;q=0.9,en;q=0.8") == "zh-CN")
        #expect(LocaleChoice.negotiate("en-GB,zh;q=0.5") == "en")
        #expect(LocaleChoice.negotiate("zh-TW,zh-Hant;q=0.9") == "en")  // no Traditional catalogue
        #expect(LocaleChoice.negotiate("fr-FR,zh-Hans;q=0.4,en;q=0.3") == "zh-CN")
        #expect(LocaleChoice.negotiate("") == "en")
        #expect(LocaleChoice.choose(query: "zh_CN", cookie: "en", acceptLanguage: "en") == "zh-CN")
        #expect(LocaleChoice.choose(query: "xx", cookie: "zh-CN", acceptLanguage: "en") == "zh-CN")
    }

    @Test func forwardedAddressesAreBelievedOnlyFromTrustedProxies() throws {
        let addressing = ClientAddressing(trustedProxies: ["127.0.0.1", "10.0.0.2"])
        let proxy = try SocketAddress(ipAddress: "127.0.0.1", port: 4000)
        let stranger = try SocketAddress(ipAddress: "198.51.100.9", port: 4000)
        // The person's address is the first untrusted one from the right.
        #expect(addressing.origin(peer: proxy, forwardedFor: ["203.0.113.7, 10.0.0.2"], forwardedProto: "https") == .init(address: "203.0.113.7", https: true))
        // A forged left-most entry is not believed past a real hop.
        #expect(addressing.origin(peer: proxy, forwardedFor: ["1.2.3.4, 203.0.113.7"], forwardedProto: nil).address == "203.0.113.7")
        // From anyone else the headers are ignored.
        #expect(addressing.origin(peer: stranger, forwardedFor: ["203.0.113.7"], forwardedProto: "https") == .init(address: "198.51.100.9", https: false))
        // Garbage stops the walk at the last good hop.
        #expect(addressing.origin(peer: proxy, forwardedFor: ["203.0.113.7, nonsense"], forwardedProto: nil).address == "127.0.0.1")
    }

    @Test func claimsAreGoodOnceForTheirFlowWithinTheirLifetime() {
        let claims = LoginClaims(lifetime: .seconds(60), capacity: 2)
        let now = NIODeadline.uptimeNanoseconds(1_000_000_000)
        let code = claims.keep(token: "T", user: "alice", flow: "flow-a", now: now)!
        #expect(claims.redeem(code, flow: "flow-b", now: now) == nil)
        #expect(claims.redeem(code, flow: "flow-a", now: now)! == ("T", "alice"))
        #expect(claims.redeem(code, flow: "flow-a", now: now) == nil)  // once
        let late = claims.keep(token: "U", user: "bob", flow: "flow-a", now: now)!
        #expect(claims.redeem(late, flow: "flow-a", now: now + .seconds(61)) == nil)
        _ = claims.keep(token: "1", user: "x", flow: "f", now: now)
        _ = claims.keep(token: "2", user: "x", flow: "f", now: now)
        #expect(claims.keep(token: "3", user: "x", flow: "f", now: now) == nil)  // full
        #expect(claims.keep(token: "3", user: "x", flow: "f", now: now + .seconds(61)) != nil)  // expired ones make room
    }

    @Test func anIPv6AddressCountsAsItsSlash64() {
        let limits = AddressLimits(limit: 2)
        #expect(limits.take("2001:db8:1:2::1") && limits.take("2001:db8:1:2:ffff::9"))
        #expect(!limits.take("2001:db8:1:2::77"))
        #expect(limits.take("2001:db8:1:3::1"))
        limits.release("2001:db8:1:2::1")
        #expect(limits.take("2001:db8:1:2::5"))
        #expect(limits.take("192.0.2.1") && limits.take("192.0.2.1") && !limits.take("192.0.2.1"))
    }

    @Test func secretsAreWellFormedAndCompared() {
        let secret = Secrets.make()
        #expect(Secrets.isWellFormed(secret) && secret != Secrets.make())
        #expect(!Secrets.isWellFormed("../../etc") && !Secrets.isWellFormed(secret.uppercased()))
        #expect(Secrets.equal(secret, secret) && !Secrets.equal(secret, Secrets.make()) && !Secrets.equal("a", "ab"))
    }

    @Test func overHTTPSTheCookiesCarryTheHostPrefix() {
        let secure = BrowserFlow.CookieNames(secure: true)
        #expect([secure.flow, secure.csrf, secure.token] == ["__Host-signupd_flow", "__Host-signupd_csrf", "__Host-signupd_token"])
        #expect(BrowserFlow.CookieNames(secure: false).token == "signupd_token")
        // A flow cookie under the other name is not taken for this one.
        let flow = BrowserFlow(cookies: ["signupd_flow": String(repeating: "a", count: 32)], address: nil, names: secure)
        #expect(flow.isNew)
    }

    @Test func pathsNameForms() {
        #expect(WebApp.formName(of: "/") == "signup")
        #expect(WebApp.formName(of: "/phone-login") == "phone-login")
        #expect(WebApp.formName(of: "/../etc") == nil && WebApp.formName(of: "/a/b") == nil)
    }
}
