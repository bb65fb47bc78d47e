import SignupProtocol
import Testing
@testable import SignupWebCore

/// What the WebSocket relay lets through, and how ids stay apart from the bridge's own.
@Suite struct RelayRulesTests {
    private func object(_ text: String) throws -> JSONObject {
        try #require(try JSONParser.parse(Array(text.utf8)).objectValue)
    }

    @Test func aPageRequestIsWrittenAnewWithItsIdWrapped() throws {
        let decision = RelayRules.fromBrowser(Array(#"{"op":"set","field":"username","value":"a\nb","id":7}"#.utf8))
        guard case .forward(let line) = decision else {
            Issue.record("not forwarded: \(decision)")
            return
        }
        #expect(line["id"] == .string("w7"))
        // Written anew by the JSON writer: the newline stays escaped, one line only.
        #expect(!RelayRules.text(line).contains("\n"))
        #expect(line["value"] == .string("a\nb"))
    }

    @Test func aStringIdRoundTrips() throws {
        guard case .forward(let line) = RelayRules.fromBrowser(Array(#"{"op":"ping","id":"x\"y"}"#.utf8)) else {
            Issue.record("not forwarded")
            return
        }
        let reply = JSONObject([.init(key: "event", value: .string("pong")), .init(key: "id", value: try #require(line["id"]))])
        #expect(RelayRules.toBrowser(reply)?["id"] == .string("x\"y"))
    }

    @Test(arguments: ["client", "attach", "sessions", "verify", "logout", "monitor"])
    func operationsNotForPageScriptAreRefused(op: String) {
        let decision = RelayRules.fromBrowser(Array(#"{"op":"\#(op)","id":3}"#.utf8))
        guard case .answer(let answer) = decision else {
            Issue.record("\(op) was forwarded")
            return
        }
        #expect(answer["code"] == .string("forbidden") && answer["id"] == .number("3"))
    }

    @Test func badFramesAreAnsweredByTheBridge() {
        guard case .answer(let notJSON) = RelayRules.fromBrowser(Array("{nope".utf8)) else {
            Issue.record("forwarded")
            return
        }
        #expect(notJSON["code"] == .string("invalid_json"))
        guard case .answer(let notObject) = RelayRules.fromBrowser(Array("[1]".utf8)) else {
            Issue.record("forwarded")
            return
        }
        #expect(notObject["code"] == .string("invalid_request"))
        guard case .answer(let noOp) = RelayRules.fromBrowser(Array(#"{"id":1}"#.utf8)) else {
            Issue.record("forwarded")
            return
        }
        #expect(noOp["code"] == .string("invalid_request"))
    }

    @Test func repliesToTheBridgesOwnRequestsNeverReachThePage() throws {
        #expect(RelayRules.toBrowser(try object(#"{"event":"client","client":"web-1","id":1}"#)) == nil)
        #expect(RelayRules.toBrowser(try object(#"{"event":"pong","id":"v1"}"#)) == nil)
        // Events without an id pass as they are.
        let event = try object(#"{"event":"validation","session":"s","seq":3}"#)
        #expect(RelayRules.toBrowser(event) == event)
    }

    @Test func aLoginTokenBecomesAClaim() throws {
        let result = try object(#"{"event":"result","ok":true,"user":"alice","token":"secret-token"}"#)
        let shown = RelayRules.withClaim(result, claim: "c0ffee")
        #expect(shown["token"] == nil && shown["claim"] == .string("c0ffee") && shown["user"] == .string("alice"))
        #expect(!RelayRules.text(shown).contains("secret-token"))
    }
}
