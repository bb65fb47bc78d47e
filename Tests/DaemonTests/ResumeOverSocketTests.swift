import SignupProtocol
import Testing

/// Resume as a real client meets it (issue 23): the client closes its socket, or half-closes
/// it and then closes, or resets it — the daemon sees only the end of its input — and a new
/// connection takes the session back with everything typed.
@Suite("resume after the socket closes, over a real socket")
struct ResumeOverSocketTests {
    enum Drop: String, CaseIterable, Sendable { case close, halfCloseThenClose }

    @Test("a dropped connection's form is resumed with its values and seq", arguments: StoreUnderTest.allCases, Drop.allCases)
    func resumes(store: StoreUnderTest, drop: Drop) throws {
        let daemon = try DaemonPerStore.get("resume", store)
        let first = try daemon.connect()
        _ = try first.hello()
        try first.send(Request(id: .string("o"), .open(form: "signup", locale: nil)))
        let opened = try first.next("opened")
        let session = try #require(opened.string("session"))
        let secret = try #require(opened.string("resume"))
        try first.send(Request(.set(session: nil, field: "password", value: "tr0ub4dor&3x-staple")))
        try first.send(Request(.set(session: nil, field: "repeatedPassword", value: "tr0ub4dor&3x-staple")))
        let seen = try first.sync()
        let seenSeqs = seen.compactMap { $0["seq"]?.int64Value }
        let lastSeq = try #require(seenSeqs.max())
        if drop == .halfCloseThenClose { first.shutdownOutput() }
        first.disconnect()

        // The daemon notices the close on its own time: ask until the session is waiting.
        let second = try daemon.connect()
        _ = try second.hello()
        var waiting = false
        for attempt in 0..<90 where !waiting {  // within the request budget's burst (100)
            try second.send(Request(id: .string("s\(attempt)"), .sessions()))
            let listed = try second.next(where: { $0.string("id") == "s\(attempt)" }).match
            waiting = listed["sessions"]?.arrayValue?.contains { $0.objectValue?["session"]?.stringValue == session && $0.objectValue?["detachedSeconds"] != nil } == true
        }
        #expect(waiting, "the dropped connection's session never showed as waiting for resume")
        try second.send(Request(id: .string("r"), .resume(session: session, secret: secret)))
        let resumed = try second.next(where: { $0.string("id") == "r" })
        #expect(resumed.match.string("event") == "resumed" && resumed.match.string("session") == session, "\(resumed.match)")
        let snapshot = try second.sync()
        let seqs = snapshot.compactMap { $0["seq"]?.int64Value }
        #expect(seqs.first.map { $0 > lastSeq } == true)
        #expect(snapshot.first { $0.string("field") == "repeatedPassword" }?.string("state") == "ok")
    }
}
