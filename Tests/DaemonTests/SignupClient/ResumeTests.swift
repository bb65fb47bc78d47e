import Foundation
import SignupProtocol
import Testing

@testable import SignupClient

/// A dropped connection is re-established and the form resumed within the daemon's grace
/// (`resume` op): the caller's next input and output carry on as if nothing happened.
@Suite("SignupClient: resume after a dropped connection", .timeLimit(.minutes(3)))
struct ResumeTests {
    @Test("the client's connection dies mid-form; the next output arrives with no value lost and no seq twice")
    func resumesMidForm() async throws {
        let daemon = try SharedDaemon.get()
        let form = try await SignupForm.open("signup", socket: daemon.socketPath)
        let changes = form.changes()
        let name = uniqueName("resume")
        try await form.set("username", to: name)
        try await form.set("password", to: "pass word")
        try await form.settle()
        try await waitUntil(form) { $0.fields["username"]?.state == .ok }

        // Kill the client's connection, not the daemon: signupd keeps the session for its grace.
        let dropped = form.connection
        dropped.drop()
        #expect(await dropped.end == .disconnected)

        // The next input waits for the resume and goes out on the new connection.
        try await form.set("repeatedPassword", to: "pass word")
        try await form.settle()
        #expect(form.connection !== dropped)
        #expect(form.state.fields.values.allSatisfy { $0.state == .ok }, "\(form.state.fields)")
        #expect(form.state.enabled)
        try await form.submit()
        try await waitUntil(form) { $0.result != nil && !$0.busy }
        await form.close()

        let seen = await everyChange(changes)
        // No value lost: the username and password typed before the drop are the ones signed up.
        let results = seen.compactMap { if case .result(let result) = $0.kind { result } else { nil } }
        #expect(results.count == 1 && results.first?.ok == true && results.first?.user == name, "\(results)")
    }
}

/// The client side of resume against a stand-in that speaks the resume spec (until the
/// daemon's lands): the form reconnects by itself, resumes with the secret `opened` gave,
/// applies the snapshot, drops what it saw already (by seq) and carries on.
@Suite("SignupClient: resume, against a stand-in", .timeLimit(.minutes(3)))
struct ResumeStandInTests {
    /// A signup session as the spec has it, `seq` shared by its connections.
    final class Session: @unchecked Sendable {
        private let lock = NSLock()
        private var seq: UInt64 = 0
        private var fields = ["username": "empty", "password": "empty", "repeatedPassword": "empty"]
        let secret: String

        init(secret: String) { self.secret = secret }

        static let description = #"{"event":"description","id":ID,"forms":[{"name":"signup","submitLabel":"Sign up","fields":[{"name":"username","secret":false,"label":"Username"},{"name":"password","secret":true,"label":"Password"},{"name":"repeatedPassword","secret":true,"label":"Repeat"}]}]}"#

        func answer(_ request: JSONObject, connection: Int) -> [String] {
            lock.lock()
            defer { lock.unlock() }
            let id = request.idText
            switch request["op"]?.stringValue {
            case "describe": return [Self.description.replacingOccurrences(of: "ID", with: id)]
            case "open":
                return [#"{"event":"opened","id":\#(id),"session":"S","form":"signup","locale":"en","resume":"\#(secret)"}"#] + snapshot(id: id)
            case "resume":
                guard request["resume"]?.stringValue == secret else {
                    return [#"{"event":"error","code":"forbidden","message":"wrong resume secret","id":\#(id),"session":"S"}"#]
                }
                // The snapshot with seq continuing, then a repeat of an event already seen
                // (its old seq), which the client must drop.
                let repeated = validation("username", seq: 2, id: id)
                return [#"{"event":"resumed","id":\#(id),"session":"S","form":"signup","locale":"en"}"#] + snapshot(id: id) + [repeated]
            case "set":
                let field = request["field"]?.stringValue ?? ""
                fields[field] = request["value"]?.stringValue == "" ? "empty" : "ok"
                seq += 1
                return [validation(field, seq: seq, id: nil)]
            case "ping": return [#"{"event":"pong","id":\#(id)}"#]
            case "close": return [#"{"event":"closed","id":\#(id),"session":"S"}"#]
            default: return []
            }
        }

        private func snapshot(id: String) -> [String] {
            var lines: [String] = []
            for field in ["username", "password", "repeatedPassword"] {
                seq += 1
                lines.append(validation(field, seq: seq, id: id))
            }
            seq += 1
            lines.append(#"{"event":"enabled","session":"S","seq":\#(seq),"id":\#(id),"value":false}"#)
            seq += 1
            lines.append(#"{"event":"busy","session":"S","seq":\#(seq),"id":\#(id),"value":false}"#)
            return lines
        }

        private func validation(_ field: String, seq: UInt64, id: String?) -> String {
            let state = fields[field] ?? "empty"
            let member = id.map { #","id":\#($0)"# } ?? ""
            return #"{"event":"validation","session":"S","seq":\#(seq)\#(member),"field":"\#(field)","state":"\#(state)","message":"","messageId":"","params":{}}"#
        }
    }

    @Test("the connection drops; the form resumes by itself and its outputs go on, no seq twice")
    func resumes() async throws {
        let session = Session(secret: "s3cret")
        let server = try FakeServer { request, connection in session.answer(request, connection: connection) }
        defer { server.stop() }
        let form = try await SignupForm.open("signup", socket: server.path)
        let changes = form.changes()
        try await form.set("username", to: "alice")
        try await form.settle()
        #expect(form.state.fields["username"]?.state == .ok)

        let dropped = form.connection
        dropped.drop()
        // The next input goes out once the form is resumed on a new connection.
        try await form.set("password", to: "pass word")
        try await form.settle()
        #expect(form.connection !== dropped)
        #expect(await dropped.end == .disconnected)
        #expect(form.state.fields["username"]?.state == .ok, "kept across the drop")
        #expect(form.state.fields["password"]?.state == .ok, "set after the resume")
        await form.close()

        let seen = await everyChange(changes)
        // username ok (before the drop), the resume's snapshot, then password ok: the
        // repeated seq 2 was dropped.
        let username = seen.filter { if case .validation(let v) = $0.kind { v.field == "username" } else { false } }
        #expect(username.compactMap(\.seq) == [6, 7], "\(seen)")
        #expect(seen.last { $0.seq != nil }?.kind == .validation(FieldValidation(field: "password", state: .ok)), "\(seen)")
        #expect(seen.last?.kind == .closed(reason: nil), "the close, last")
    }

    @Test("a resume refused (wrong secret) ends the form with the refusal, and its outputs finish")
    func refused() async throws {
        let session = Session(secret: "s3cret")
        let server = try FakeServer { request, connection in
            // The second connection forgets the secret: as if another client tried it.
            var request = request
            if connection > 0, request["op"]?.stringValue == "resume" {
                request.members = request.members.map { $0.key == "resume" ? .init(key: "resume", value: .string("wrong")) : $0 }
            }
            return session.answer(request, connection: connection)
        }
        defer { server.stop() }
        let form = try await SignupForm.open("signup", socket: server.path)
        let changes = form.changes()
        form.connection.drop()
        await #expect(throws: SignupClientError.refused(SignupServerError(code: .known(.forbidden), message: "wrong resume secret", session: "S", id: .integer(1)))) {
            try await form.set("password", to: "x")
        }
        _ = await everyChange(changes)  // finishes: the form is over
        #expect(form.endReason != nil)
    }
}
