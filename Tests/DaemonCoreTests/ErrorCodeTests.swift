import Foundation
import NIOCore
import SignupProtocol
import Testing
@testable import SignupDaemonCore

/// Every error code of PROTOCOL.md's table, provoked the way a client would, arrives with
/// its code, its message, the request's id and the session it concerns.
@Suite struct ErrorCodeTests {
    /// The refusal each code is checked with: what to send, and what must come back.
    struct Case: Sendable, CustomTestStringConvertible {
        var code: ErrorCode
        var store: InProcessDaemon.StoreKind = .memory
        var maxLineBytes = 128
        /// Requests before the one refused (their answers are read and dropped).
        var setup: [String] = []
        var request: String
        var message: String
        /// The session the error names ("$S": the one the setup opened).
        var session: String? = nil
        var testDescription: String { code.rawValue }
    }

    static let cases: [Case] = [
        Case(code: .invalidJSON, request: #"{"op":"ping""#, message: "unexpected end of input in an object at byte 12"),
        Case(code: .lineTooLong, request: String(repeating: " ", count: 130) + #"{"op":"ping"}"#, message: "line longer than 128 bytes; discarded"),
        Case(code: .invalidRequest, request: "[1]", message: "a request must be a JSON object, not array"),
        Case(
            code: .unknownOp, request: #"{"op":"launch","id":7}"#,
            message: #"unknown op "launch"; known: describe, ping, open, attach, set, submit, snapshot, close, verify, logout, sessions, locale, client, resume, status, signups"#
        ),
        Case(code: .unknownForm, request: #"{"op":"open","form":"nope","id":7}"#, message: #"unknown form "nope"; known: signup, login, phone-signup, phone-login"#),
        Case(
            code: .unknownField, setup: [#"{"op":"open","form":"login"}"#], request: #"{"op":"set","field":"shoe","value":"x","id":7}"#,
            message: #"form login has no field "shoe""#, session: "$S"
        ),
        Case(
            code: .valueTooLong, maxLineBytes: 8192, setup: [#"{"op":"open","form":"login"}"#],
            request: #"{"op":"set","field":"username","value":"\#(String(repeating: "a", count: 1021))","id":7}"#,
            message: #"the value of "username" is longer than its 1020 bytes (UTF-8); not stored, the field keeps its previous value"#, session: "$S"
        ),
        Case(code: .noSession, request: #"{"op":"snapshot","id":7}"#, message: #"no session is open on this connection; send {"op":"open","form":...} first"#),
        Case(code: .sessionOpen, setup: [#"{"op":"open","form":"login"}"#], request: #"{"op":"attach","session":"$S","id":7}"#, message: "this connection already holds session $S", session: "$S"),
        Case(code: .unknownSession, request: #"{"op":"attach","session":"0123456789abcdef","id":7}"#, message: "no session 0123456789abcdef", session: "0123456789abcdef"),
        Case(code: .notReady, setup: [#"{"op":"open","form":"login"}"#], request: #"{"op":"submit","id":7}"#, message: "submit is not enabled yet: every field must be ok and nothing in progress", session: "$S"),
        Case(code: .rateLimited, setup: [#"{"op":"describe"}"#, #"{"op":"describe"}"#], request: #"{"op":"describe","id":7}"#, message: "too many requests; slow down"),
        Case(code: .limitExceeded, setup: [#"{"op":"open","form":"login"}"#], request: #"{"op":"open","form":"login","id":7}"#, message: "at most 1 sessions per connection"),
        Case(code: .invalidToken, request: #"{"op":"verify","token":"nope","id":7}"#, message: "unknown, malformed or expired token"),
        Case(code: .storeUnavailable, store: .unavailable, request: #"{"op":"verify","token":"\#(String(repeating: "A", count: 43))","id":7}"#, message: "the account store is unavailable"),
    ]

    @Test(arguments: cases)
    func arrivesWithItsCodeAndMessage(_ check: Case) async throws {
        let daemon = try InProcessDaemon(
            store: check.store, limits: ServerLimits(maxLineBytes: check.maxLineBytes, maxSessionsPerConnection: 1, maxOutputBytes: 1 << 20), expensiveRequestsPerSecond: 1
        )
        let client = try await daemon.connect()
        var session = ""
        for request in check.setup {
            try await client.send(request)
            for event in try await client.sync() where event.event == "opened" { session = event.string("session") ?? "" }
        }
        try await client.send(check.request.replacingOccurrences(of: "$S", with: session))
        let error = try ServerEvent.decode(try await client.next())
        let expected = ServerEvent.error(
            code: check.code, message: check.message.replacingOccurrences(of: "$S", with: session),
            session: check.session?.replacingOccurrences(of: "$S", with: session), id: check.request.contains(#""id":7"#) ? .integer(7) : nil
        )
        #expect(error == expected)
        try await daemon.stop()
    }

    @Test func forbiddenNamesTheOtherUsersSession() async throws {
        let daemon = try InProcessDaemon()
        let opener = try await daemon.connect()
        try await opener.send(#"{"op":"open","form":"login"}"#)
        let session = try #require(try await opener.next("opened").match.string("session"))
        let other = try await daemon.connect(uid: 4242)
        try await other.send(#"{"op":"attach","session":"\#(session)","id":7}"#)
        let error = try ServerEvent.decode(try await other.next())
        #expect(error == .error(code: .forbidden, message: "session \(session) belongs to another user", session: session, id: .integer(7)))
        try await daemon.stop()
    }

    @Test func finishedAfterASuccessfulSignup() async throws {
        let daemon = try InProcessDaemon()
        let client = try await daemon.connect()
        #expect(try await client.signUp("carol", "correct horse")["ok"] == .bool(true))
        try await client.send(#"{"op":"set","field":"username","value":"dave","id":7}"#)
        let error = try ServerEvent.decode(try await client.next("error").match)
        guard case .error(.finished, "this session has completed; open a new one", let named, .integer(7)) = error, named != nil else {
            Issue.record("not the finished error: \(error)")
            return
        }
        try await daemon.stop()
    }

    @Test func shuttingDownWhileDraining() async throws {
        let daemon = try InProcessDaemon()
        let client = try await daemon.connect()
        daemon.services.registry.beginDraining()
        try await client.send(#"{"op":"open","form":"login","id":7}"#)
        let error = try ServerEvent.decode(try await client.next())
        #expect(error == .error(code: .shuttingDown, message: "the server is shutting down; try again after it restarts", session: nil, id: .integer(7)))
        try await daemon.stop()
    }

    /// PROTOCOL.md's table states the daemon's fixed messages as they are.
    @Test func protocolDocumentsTheFixedMessages() throws {
        let root = SourceTree.root
        let rows = try String(contentsOf: root.appendingPathComponent("PROTOCOL.md"), encoding: .utf8).split(separator: "\n")
        let fixed: [RequestFailure] = [
            .noSession, .notReady(session: ""), .finished(session: ""), .tooManyRequests(session: nil), .invalidToken,
            .shuttingDown(session: nil), .storeUnavailable, .draining,
        ]
        for failure in fixed {
            let row = rows.first { $0.hasPrefix("| `\(failure.code.rawValue)` |") }
            #expect(row?.contains("`\(failure.message)`") == true, "PROTOCOL.md's \(failure.code.rawValue) row lacks `\(failure.message)`")
        }
    }

    /// Checked by the three tests above the table's: they need another uid, a finished
    /// session or a draining daemon.
    static let checkedApart: Set<ErrorCode> = [.forbidden, .finished, .shuttingDown, .clientFixed]
    /// Codes this version never sends (PROTOCOL.md says so in their rows).
    static let reserved: Set<ErrorCode> = [.internal]

    @Test func everyCodeIsCheckedOrDocumentedAsReserved() throws {
        let table = Set(Self.cases.map(\.code))
        #expect(table.isDisjoint(with: Self.checkedApart) && table.isDisjoint(with: Self.reserved))
        #expect(table.union(Self.checkedApart).union(Self.reserved) == Set(ErrorCode.allCases))
        let root = SourceTree.root
        let rows = try String(contentsOf: root.appendingPathComponent("PROTOCOL.md"), encoding: .utf8).split(separator: "\n")
        for code in Self.reserved {
            let row = rows.first { $0.hasPrefix("| `\(code.rawValue)` |") }
            #expect(row?.contains("not sent by this version") == true, "PROTOCOL.md's \(code.rawValue) row does not say it is reserved")
        }
    }
}
