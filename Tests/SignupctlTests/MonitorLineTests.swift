import SignupProtocol
import Testing

@testable import signupctl

/// `signupctl monitor` without --json: one line per event, read as a typed `ServerEvent`.
@Suite("monitor's lines")
struct MonitorLineTests {
    static func line(_ json: String) throws -> String {
        let object = try #require(try JSONParser.parse(Array(json.utf8)).objectValue)
        return SignupCtl.Monitor.describe(Received(object))
    }

    @Test func sessionEventsCarryTheirSequenceNumber() throws {
        #expect(try Self.line(#"{"event":"validation","session":"s","seq":4,"field":"username","state":"failed","message":"Username already taken","messageId":"username.taken","params":{}}"#)
            == "#4 username: failed — Username already taken")
        #expect(try Self.line(#"{"event":"validation","session":"s","seq":1,"field":"password","state":"empty","message":"","messageId":"","params":{}}"#)
            == "#1 password: empty")
        #expect(try Self.line(#"{"event":"busy","session":"s","seq":7,"value":true}"#) == "#7 busy: true")
        #expect(try Self.line(#"{"event":"enabled","session":"s","seq":8,"value":false}"#) == "#8 enabled: false")
        #expect(try Self.line(#"{"event":"result","session":"s","seq":9,"ok":false,"message":"Invalid username or password","messageId":"username.invalid_credentials","params":{}}"#)
            == "#9 result: failed — Invalid username or password")
    }

    @Test func connectionEventsAreNamed() throws {
        #expect(try Self.line(#"{"event":"attached","session":"6269dc250b7ece04","form":"login","id":1}"#) == "attached to session 6269dc250b7ece04 (login)")
        #expect(try Self.line(#"{"event":"closed","session":"6269dc250b7ece04"}"#) == "session closed")
        #expect(try Self.line(#"{"event":"bye","reason":"shutdown"}"#) == "signupd said bye: shutdown")
    }

    @Test func anEventItCannotReadIsShownRaw() throws {
        #expect(try Self.line(#"{"event":"future","x":1}"#) == #"{"event":"future","x":1}"#)
        #expect(try Self.line(#"{"event":"busy","session":"s"}"#) == #"{"event":"busy","session":"s"}"#)
    }
}
