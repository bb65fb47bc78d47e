import NIOCore
import SignupProtocol
import Testing
@testable import SignupDaemonCore

/// `sessions` in pages through the daemon (issue 27 item 3): every session once, oldest
/// first; bad `limit` and `after` refused as documented; another user's cursor shows nothing.
@Suite struct SessionListTests {
    /// Opens `count` signup sessions for `uid`, a virtual millisecond apart (oldest first is
    /// their opening order), on as many connections as the per-connection limit needs.
    private func open(_ count: Int, uid: UInt32, on daemon: InProcessDaemon) async throws -> (ids: [String], clients: [TestClient]) {
        var ids: [String] = []
        var clients: [TestClient] = []
        for n in 0..<count {
            if n % 16 == 0 { clients.append(try await daemon.connect(uid: uid)) }
            try await clients[clients.count - 1].send(#"{"op":"open","form":"signup"}"#)
            ids.append(try #require(try await clients[clients.count - 1].next("opened").match.string("session")))
            await daemon.advance(by: .milliseconds(1))
        }
        return (ids, clients)
    }

    /// Follows `next` from page to page; the ids listed and how many pages it took.
    private func allPages(_ client: TestClient, limit: Int, all: Bool = false) async throws -> (ids: [String], pages: Int) {
        var ids: [String] = []
        var after: String?
        var pages = 0
        repeat {
            let cursor = after.map { #","after":"\#($0)""# } ?? ""
            try await client.send(#"{"op":"sessions","limit":\#(limit)\#(cursor)\#(all ? #","all":true"# : ""),"id":\#(pages)}"#)
            let reply = try await client.next("sessions").match
            #expect(reply["id"] == .number("\(pages)"))
            let listed = reply["sessions"]?.arrayValue ?? []
            #expect(listed.count <= limit)
            ids += listed.compactMap { $0.objectValue?.string("session") }
            after = reply.string("next")
            pages += 1
        } while after != nil
        return (ids, pages)
    }

    @Test func pagesListEverySessionOnceOldestFirst() async throws {
        let daemon = try InProcessDaemon(expensiveRequestsPerSecond: 1000)
        let (ids, clients) = try await open(40, uid: 1000, on: daemon)
        let other = try await open(5, uid: 1001, on: daemon)
        let (listed, pages) = try await allPages(clients[0], limit: 7)
        #expect(listed == ids && pages == 6)
        // Without `limit` (an older client): the first page, of the default size, all of these.
        try await clients[1].send(#"{"op":"sessions","id":"old"}"#)
        let first = try await clients[1].next("sessions").match
        #expect(first["sessions"]?.arrayValue?.count == 40 && first["next"] == nil)
        // Closing one not yet listed and opening one between pages: neither repeats nor hides others.
        try await clients[0].send(#"{"op":"sessions","limit":10,"id":1}"#)
        let page = try await clients[0].next("sessions").match
        let next = try #require(page.string("next"))
        try await clients[2].send(#"{"op":"close","session":"\#(ids[35])","id":2}"#)
        try await clients[2].next("closed")
        try await clients[2].send(#"{"op":"open","form":"signup"}"#)
        let newest = try #require(try await clients[2].next("opened").match.string("session"))
        try await clients[0].send(#"{"op":"sessions","limit":500,"after":"\#(next)","id":3}"#)
        let rest = try await clients[0].next("sessions").match
        #expect(rest["next"] == nil)
        let restIDs = rest["sessions"]?.arrayValue?.compactMap { $0.objectValue?.string("session") } ?? []
        #expect(restIDs == Array(ids[10..<35] + ids[36...]) + [newest])
        // An administrator pages through everyone's, in opening order.
        let root = try await daemon.connect(uid: 0)
        let everyone = try await allPages(root, limit: 9, all: true)
        #expect(everyone.ids == ids.filter { $0 != ids[35] } + other.ids + [newest])
        try await daemon.stop()
    }

    @Test func anotherUsersCursorShowsNothingOfTheirs() async throws {
        let daemon = try InProcessDaemon(expensiveRequestsPerSecond: 1000)
        let (_, alice) = try await open(20, uid: 1000, on: daemon)
        let bob = try await daemon.connect(uid: 1001)
        try await alice[0].send(#"{"op":"sessions","limit":3,"id":1}"#)
        let next = try #require(try await alice[0].next("sessions").match.string("next"))
        try await bob.send(#"{"op":"sessions","limit":3,"after":"\#(next)","id":2}"#)
        let reply = try await bob.next("sessions").match
        #expect(reply["sessions"] == .array([]) && reply["next"] == nil)
        try await daemon.stop()
    }

    @Test(arguments: [
        (#""limit":0"#, #""limit" must be 1 to 500 (the default is 100)"#),
        (#""limit":501"#, #""limit" must be 1 to 500 (the default is 100)"#),
        (#""limit":100000000000000000000"#, #""limit" must be 1 to 500 (the default is 100)"#),
        (#""limit":2.5"#, #""limit" must be 1 to 500 (the default is 100)"#),
        (#""limit":"10""#, #""limit" must be an integer, not string"#),
        (#""after":"""#, #""after" must be the "next" of the previous page"#),
        (#""after":7"#, #""after" must be a string, not number"#),
        (#""after":"0000000000000000""#, #""after" must be the "next" of the previous sessions page, as the server sent it"#),
        (#""after":"12-XYZ""#, #""after" must be the "next" of the previous sessions page, as the server sent it"#),
    ])
    func badPagesAreRefusedAsDocumented(members: String, message: String) async throws {
        let daemon = try InProcessDaemon()
        let client = try await daemon.connect()
        try await client.send(#"{"op":"sessions",\#(members),"id":9}"#)
        let error = try await client.next()
        #expect(error.event == "error" && error.string("code") == "invalid_request")
        #expect(error.string("message")?.hasPrefix(message) == true, "\(error.string("message") ?? "")")
        #expect(error["id"] == .number("9"))
        try await daemon.stop()
    }

    @Test func aBiggerPageCostsMoreOfTheRequestBudget() async throws {
        // 10 a second, bursts of 20: five pages of 500 (each worth five of 100) use it all.
        let daemon = try InProcessDaemon(expensiveRequestsPerSecond: 10)
        let client = try await daemon.connect()
        for n in 0..<4 {
            try await client.send(#"{"op":"sessions","limit":500,"id":\#(n)}"#)
            #expect(try await client.next().event == "sessions")
        }
        try await client.send(#"{"op":"sessions","limit":500,"id":5}"#)
        #expect(try await client.next().string("code") == "rate_limited")
        // A second later the budget has refilled by ten: a page of the default size costs one.
        await daemon.advance(by: .seconds(1))
        try await client.send(#"{"op":"sessions","id":6}"#)
        #expect(try await client.next().event == "sessions")
        try await daemon.stop()
    }
}
