import FoundationEssentials
@testable import FormEngine
import SignupProtocol
import Testing

@Suite("Handover state format")
struct HandoverStateTests {
    /// A signup half typed: a name whose availability check is in flight, a password.
    private func midForm() throws -> FormSession {
        var session = FormSession(form: .signup, locale: "de")
        _ = try session.handle(.set(field: "username", value: "alice"), now: .zero)
        _ = try session.handle(.set(field: "password", value: "s3cret!"), now: .zero)
        return session
    }

    private func sample() throws -> HandoverState {
        HandoverState(
            sessions: [.init(id: "00000000000000aa", form: try midForm(), seq: 17, owner: "c.1.1", views: ["c.1.2"])],
            connections: [
                .init(name: "c.1.1", sessions: ["00000000000000aa"], lines: [.line(HandoverBytes(Array(#"{"op":"ping"}"#.utf8))), .tooLong], partial: Array(#"{"op":"se"#.utf8), unsent: Array("{\"event\":\"pong\"}\n".utf8)),
                .init(name: "c.1.2", sessions: ["00000000000000aa"], discarding: true),
                .init(name: "c.1.3", sessions: []),
            ]
        )
    }

    @Test("a state round-trips exactly, the engine state included")
    func roundTrip() throws {
        let state = try sample()
        let decoded = try HandoverCodec.decode(try HandoverCodec.encode(state))
        #expect(decoded == state)
        #expect(decoded.sessions[0].form.values[decoded.sessions[0].form.form.index(of: "password")!] == "s3cret!")
        #expect(decoded.sessions[0].form.locale == "de")
        #expect(decoded.connections[0].unsent.bytes == Array("{\"event\":\"pong\"}\n".utf8))
    }

    @Test("every truncation is a typed error", arguments: [0, 1, 7, 8, 12, 23, 24, 25])
    func truncated(keep: Int) throws {
        let bytes = try HandoverCodec.encode(try sample())
        let cut = keep == 25 ? Array(bytes.dropLast()) : Array(bytes.prefix(keep))
        #expect(throws: HandoverStateError.self) { try HandoverCodec.decode(cut) }
    }

    @Test("a cut payload says truncated with both lengths")
    func truncatedReason() throws {
        let bytes = try HandoverCodec.encode(try sample())
        #expect(throws: HandoverStateError.truncated(expected: bytes.count, got: bytes.count - 10)) { try HandoverCodec.decode(Array(bytes.dropLast(10))) }
    }

    @Test("one flipped bit anywhere in the payload is a checksum mismatch")
    func corrupt() throws {
        let bytes = try HandoverCodec.encode(try sample())
        for offset in stride(from: 24, to: bytes.count, by: max(1, bytes.count / 97)) {
            var damaged = bytes
            damaged[offset] ^= 0x10
            #expect(throws: HandoverStateError.checksumMismatch) { try HandoverCodec.decode(damaged) }
        }
    }

    @Test("another format version is refused by number, version 1 (busy/finished flags) included")
    func wrongVersion() throws {
        #expect(HandoverCodec.version == 4)
        for other: UInt8 in [1, 5] {
            var bytes = try HandoverCodec.encode(try sample())
            bytes[8] = other
            #expect(throws: HandoverStateError.unsupportedVersion(UInt32(other))) { try HandoverCodec.decode(bytes) }
        }
        #expect(HandoverStateError.unsupportedVersion(5).reason.contains("version 5 is not supported (this signupd reads versions 2 to 4)"))
    }

    @Test("a version-2 state (each session with its own copy of its form) is still read: an upgrade carries its sessions")
    func versionTwoIsRead() throws {
        let state = try sample()
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let payload = [UInt8](try encoder.encode(state))
        #expect(String(decoding: payload, as: UTF8.self).contains(#""form":{"#))
        var bytes = HandoverCodec.magic
        for value in [UInt64(2) | UInt64(payload.count) << 32] { withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) } }
        bytes.append(contentsOf: [0, 0, 0, 0])  // the length's high half
        withUnsafeBytes(of: CRC32C.checksum(payload).littleEndian) { bytes.append(contentsOf: $0) }
        bytes += payload
        #expect(try HandoverCodec.decode(bytes) == state)
    }

    @Test("a version-3 state (JSON, forms stored once) is still read: an upgrade from the last release carries its sessions")
    func versionThreeIsRead() throws {
        let state = try sample()
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        encoder.userInfo[HandoverFormTable.key] = HandoverFormTable()
        let payload = [UInt8](try encoder.encode(state))
        #expect(String(decoding: payload, as: UTF8.self).contains(#""formIndex":0"#))
        let bytes = Self.framed(payload, version: 3)
        #expect(try HandoverCodec.decode(bytes) == state)
    }

    /// A header of `version` over `payload`, written here independently of the codec.
    private static func framed(_ payload: [UInt8], version: UInt32) -> [UInt8] {
        var bytes = HandoverCodec.magic
        withUnsafeBytes(of: version.littleEndian) { bytes.append(contentsOf: $0) }
        withUnsafeBytes(of: UInt64(payload.count).littleEndian) { bytes.append(contentsOf: $0) }
        withUnsafeBytes(of: crc32c(payload).littleEndian) { bytes.append(contentsOf: $0) }
        return bytes + payload
    }

    @Test("damage behind a valid checksum is a typed error or a consistent state, never a trap: every byte changed, every cut")
    func damagedPayloadNeverTraps() throws {
        var state = try sample()
        state.sessions[0].uid = 1000
        state.sessions[0].client = "web 7"
        state.sessions[0].resume = "r3sum3"
        state.connections[0].uid = 1000
        let bytes = try HandoverCodec.encode(state)
        let payload = Array(bytes[24...])
        // The records, after the form definitions (JSON, parsed by Foundation), and the definitions' length.
        var reader = BinaryReader(payload)
        let forms = try reader.span("forms")
        var refused = 0
        var read = 0
        for offset in Array(0..<forms.lowerBound) + Array(forms.upperBound..<payload.count) {
            for value: UInt8 in [0x00, 0x01, 0x7F, 0x80, 0xFF, payload[offset] ^ 0x01] where value != payload[offset] {
                var damaged = payload
                damaged[offset] = value
                do {
                    let decoded = try HandoverCodec.decode(Self.framed(damaged, version: 4))
                    try decoded.validate()
                    read += 1
                } catch {
                    refused += 1
                }
            }
        }
        for cut in Array(0..<forms.lowerBound) + Array(stride(from: forms.upperBound, to: payload.count, by: 1)) {
            #expect(throws: HandoverStateError.self) { try HandoverCodec.decode(Self.framed(Array(payload.prefix(cut)), version: 4)) }
        }
        // Most damage is caught; some (a letter of a value, a seq) reads as another consistent state.
        #expect(refused > read)
        #expect(read > 0)
    }

    @Test("a thousand sessions, read on every core, come back in order; a bad record far in is still a typed error")
    func manySessionsReadInParallel() throws {
        var state = HandoverState(connections: [.init(name: "c.1.1", sessions: [])])
        for index in 0..<1000 {
            var form = try midForm()
            _ = try form.handle(.set(field: "password", value: "pw \(index)"), now: .zero)
            let id = String(format: "%016x", index)
            state.sessions.append(.init(id: id, form: form, seq: UInt64(index), owner: "c.1.1", views: [], uid: 1000))
            state.connections[0].sessions.append(id)
        }
        let bytes = try HandoverCodec.encode(state)
        #expect(try HandoverCodec.decode(bytes) == state)
        // The 900th session's id made 17 bytes long: its record no longer parses.
        var payload = Array(bytes[24...])
        let id = Array(String(format: "%016x", 900).utf8)
        let at = try #require(payload.indices.first { payload[$0] == 16 && Array(payload[($0 + 1)..<min(payload.count, $0 + 17)]) == id })
        payload[at] = 17
        #expect {
            try HandoverCodec.decode(Self.framed(payload, version: 4))
        } throws: { error in
            guard case .malformed = error as? HandoverStateError else { return false }
            return true
        }
    }

    @Test("a record must use exactly its own bytes")
    func recordLengthsAreExact() throws {
        let state = HandoverState(connections: [.init(name: "c.1.1", sessions: [])])
        var writer = BinaryWriter()
        writer.data(Array("[]".utf8))  // no form definitions
        writer.varint(1)
        var record = BinaryWriter()
        state.connections[0].write(to: &record)
        writer.data(record.bytes + [0])  // one byte more than the record holds
        writer.varint(0)
        #expect(throws: HandoverStateError.malformed("connection c.1.1's record: 1 bytes left over")) {
            try HandoverCodec.decode(Self.framed(writer.bytes, version: 4))
        }
        var exact = BinaryWriter()
        exact.data(Array("[]".utf8))
        exact.varint(1)
        exact.data(record.bytes)
        exact.varint(0)
        #expect(try HandoverCodec.decode(Self.framed(exact.bytes, version: 4)) == state)
    }

    @Test("each form definition is stored once, however many sessions use it")
    func formsStoredOnce() throws {
        let one = try HandoverCodec.encode(try sample()).count
        var many = try sample()
        for index in 0..<100 {
            var record = many.sessions[0]
            record.id = String(format: "%016x", 0x1000 + index)
            record.owner = "c.1.3"
            record.views = []
            many.sessions.append(record)
            many.connections[2].sessions.append(record.id)
        }
        let bytes = try HandoverCodec.encode(many)
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(text.components(separatedBy: #""submitLabels""#).count == 2)
        // Version 2's copies: the definition 101 times.
        let definition = try JSONEncoder().encode(FormDefinition.signup).count
        let copies = [UInt8](try JSONEncoder().encode(many)).count
        // Each session's values are stored as they are, and carry no definition.
        #expect(bytes.count <= copies - 100 * definition + 100 * 64)
        #expect(bytes.count > one)
        #expect(try HandoverCodec.decode(bytes) == many)
    }

    @Test("values travel as their bytes: control characters cost a byte each, not a 6-byte escape")
    func valuesAsBase64() throws {
        var session = try midForm()
        let controls = String(repeating: "\u{1}", count: 4096)
        _ = try session.handle(.set(field: "password", value: controls), now: .zero)
        _ = try session.handle(.set(field: "username", value: "bob\u{7}\u{1F600}"), now: .zero)
        let state = HandoverState(
            sessions: [.init(id: "00000000000000cc", form: session, seq: 2, owner: "c.1.1", views: [])],
            connections: [.init(name: "c.1.1", sessions: ["00000000000000cc"])])
        let bytes = try HandoverCodec.encode(state)
        let baseline = try HandoverCodec.encode(try sample()).count
        #expect(!String(decoding: bytes, as: UTF8.self).contains("\\u0001"))
        #expect(bytes.count < baseline + 4096 + 1024)
        let decoded = try HandoverCodec.decode(bytes)
        #expect(decoded == state)
        #expect(decoded.sessions[0].form.values.contains(controls))
        #expect(decoded.sessions[0].form.values.contains("bob\u{7}\u{1F600}"))
    }

    /// `state` written within a quarter of its whole size, and read back.
    private func encodedInAQuarter(_ state: HandoverState) throws -> (HandoverCodec.Written, HandoverState) {
        let limit = try HandoverCodec.encode(state).count / 4
        let written = try HandoverCodec.encode(state, limit: limit)
        #expect(written.bytes.count <= limit)
        return (written, try HandoverCodec.decode(written.bytes))
    }

    @Test("over the limit, a neighbour loses its biggest sessions and everyone else keeps theirs; the connections are told")
    func fairShareOfTheLimit() throws {
        var state = HandoverState()
        state.connections = [.init(name: "c.n", sessions: []), .init(name: "c.v", sessions: [])]
        var neighbour = try midForm()
        let long = String(repeating: "\u{1}", count: 900)
        _ = try neighbour.handle(.set(field: "password", value: long), now: .zero)
        for index in 0..<64 {
            let id = String(format: "%016x", index)
            state.sessions.append(.init(id: id, form: neighbour, seq: 1, owner: "c.n", views: [], uid: 1000))
            state.connections[0].sessions.append(id)
        }
        state.sessions.append(.init(id: "00000000000000ff", form: try midForm(), seq: 9, owner: "c.v", views: ["c.n"], uid: 1001))
        state.connections[1].sessions.append("00000000000000ff")
        state.connections[0].sessions.append("00000000000000ff")
        let (written, decoded) = try encodedInAQuarter(state)
        // The victim's session is whole, on its connection and as the neighbour's view.
        #expect(decoded.sessions.last == state.sessions.last)
        #expect(decoded.connections[1].sessions == ["00000000000000ff"])
        #expect(decoded.connections[0].sessions.last == "00000000000000ff")
        // The neighbour kept what fits and was told about the rest, in order after its output.
        let kept = decoded.sessions.count - 1
        #expect(kept > 0 && kept < 64)
        #expect(written.leftOut == ["uid 1000": 64 - kept])
        let told = String(decoding: decoded.connections[0].unsent.bytes, as: UTF8.self).split(separator: "\n")
        #expect(told.count == 64 - kept)
        #expect(told.allSatisfy { $0.contains(#""event":"closed""#) && $0.contains(HandoverCodec.leftOutReason) })
        #expect(decoded.connections[1].unsent.bytes.isEmpty)
    }

    @Test("a state that cannot fit even without its sessions and connections is a typed error")
    func tooLargeEvenWithoutSessions() throws {
        let state = try sample()
        #expect(throws: HandoverStateError.tooLarge(limit: 200)) { try HandoverCodec.encode(state, limit: 200) }
    }

    @Test("over the limit, a neighbour's connections with the most in flight are not carried, its sessions on them wait for resume, and everyone else keeps everything")
    func bytesInFlightAreSharedFairly() throws {
        var state = HandoverState()
        let heavy = Array(repeating: UInt8(ascii: "x"), count: 64 * 1024)
        // The neighbour: 16 connections, each owning a session and holding 64 KiB it has not read.
        for index in 0..<16 {
            let id = String(format: "%016x", index)
            state.connections.append(.init(name: "c.n\(index)", sessions: [id], unsent: heavy, uid: 1000))
            state.sessions.append(.init(id: id, form: try midForm(), seq: 1, owner: "c.n\(index)", views: [], uid: 1000))
        }
        // The victim: one connection, its session, and a view of it on one of the neighbour's.
        state.connections.append(.init(name: "c.v", sessions: ["00000000000000ff"], unsent: Array("{\"event\":\"pong\"}\n".utf8), uid: 1001))
        state.sessions.append(.init(id: "00000000000000ff", form: try midForm(), seq: 9, owner: "c.v", views: ["c.n0"], uid: 1001))
        state.connections[0].sessions.append("00000000000000ff")
        // Before, a state whose connections alone passed the limit was not written at all:
        // every connection, the victim's included, was closed by the next process.
        let (written, decoded) = try encodedInAQuarter(state)
        // The victim's connection and session are whole.
        #expect(decoded.connections.first { $0.name == "c.v" } == state.connections.last)
        let victim = try #require(decoded.sessions.first { $0.id == "00000000000000ff" })
        #expect(victim.form == state.sessions.last?.form && victim.owner == "c.v")
        // The neighbour kept some connections, not all; every session of its is kept, those
        // whose connection was left out waiting for resume; nothing names a left-out connection.
        let carried = decoded.connections.filter { $0.uid == 1000 }
        #expect(carried.count > 0 && carried.count < 16)
        #expect(written.connectionsLeftOut == ["uid 1000": 16 - carried.count])
        #expect(written.leftOut.isEmpty)
        #expect(decoded.sessions.count == 17)
        let names = Set(decoded.connections.map(\.name))
        for session in decoded.sessions where session.uid == 1000 {
            if let owner = session.owner { #expect(names.contains(owner)) } else { #expect(session.detachedNanoseconds == 0) }
        }
        #expect(victim.views.allSatisfy(names.contains))
        #expect(decoded.sessions.contains { $0.owner == nil })
    }

    @Test("the engine's phase travels: a submitting session stays submitting, a finished one finished")
    func phaseRoundTrip() throws {
        var submitting = FormSession(form: .signup, locale: "en")
        let step = try submitting.handle(.set(field: "username", value: "alice"), now: .zero)
        for case .startCheck(let id, _, _) in step.effects {
            _ = try submitting.handle(.availability(check: id, .available), now: .zero)
        }
        _ = try submitting.handle(.set(field: "password", value: "s3cret!"), now: .zero)
        _ = try submitting.handle(.set(field: "repeatedPassword", value: "s3cret!"), now: .zero)
        #expect(submitting.enabled)
        _ = try submitting.handle(.submit, now: .zero)
        #expect(submitting.phase == .submitting)
        var finished = submitting
        _ = try finished.handle(.submitCompleted(.signedUp(user: "alice")), now: .zero)
        #expect(finished.phase == .finished)
        for session in [submitting, finished] {
            let state = HandoverState(
                sessions: [.init(id: "00000000000000bb", form: session, seq: 3, ageNanoseconds: 42_000_000_000, owner: "c.1.1", views: [])],
                connections: [.init(name: "c.1.1", sessions: ["00000000000000bb"])]
            )
            let decoded = try HandoverCodec.decode(try HandoverCodec.encode(state))
            #expect(decoded == state)
            #expect(decoded.sessions[0].form.phase == session.phase)
            #expect(decoded.sessions[0].form.enabled == false)
            #expect(decoded.sessions[0].ageNanoseconds == 42_000_000_000)
        }
    }

    @Test("bytes that are not a state at all")
    func notAState() {
        #expect(throws: HandoverStateError.notHandoverState) { try HandoverCodec.decode(Array("hello, world, this is not it".utf8)) }
        #expect(throws: HandoverStateError.notHandoverState) { try HandoverCodec.decode([]) }
    }

    @Test("trailing bytes after the payload are refused")
    func trailing() throws {
        let bytes = try HandoverCodec.encode(try sample()) + [0]
        #expect(throws: HandoverStateError.malformed("1 bytes after the payload")) { try HandoverCodec.decode(bytes) }
    }

    @Test("a well-formed checksum over an inconsistent state is malformed, never half used")
    func inconsistent() throws {
        var state = try sample()
        state.sessions[0].owner = "c.9.9"
        #expect(throws: HandoverStateError.malformed("session 00000000000000aa is owned by unknown connection c.9.9")) {
            try HandoverCodec.decode(try HandoverCodec.encode(state))
        }
        var orphan = try sample()
        orphan.connections[2].sessions = ["ffffffffffffffff"]
        #expect(throws: HandoverStateError.self) { try HandoverCodec.decode(try HandoverCodec.encode(orphan)) }
    }

    @Test("a valid header over a payload that is not a state is malformed")
    func notJSON() throws {
        let payload = Array("not json".utf8)
        var bytes = HandoverCodec.magic
        withUnsafeBytes(of: HandoverCodec.version.littleEndian) { bytes.append(contentsOf: $0) }
        withUnsafeBytes(of: UInt64(payload.count).littleEndian) { bytes.append(contentsOf: $0) }
        // CRC-32C("not json"), computed independently.
        withUnsafeBytes(of: crc32c(payload).littleEndian) { bytes.append(contentsOf: $0) }
        bytes += payload
        #expect {
            try HandoverCodec.decode(bytes)
        } throws: { error in
            guard case .malformed = error as? HandoverStateError else { return false }
            return true
        }
    }

    @Test("CRC-32C of the standard check input is 0xE3069283")
    func crcCheckValue() {
        #expect(crc32c(Array("123456789".utf8)) == 0xE306_9283)
    }

    @Test("checks in flight are handed back as effects with a fresh deadline and the same ids")
    func resumeChecks() throws {
        let configuration = FormConfiguration(checkTimeout: .seconds(7))
        // Decoded from another process, then given this host's configuration.
        var session = FormSession(restoring: try midForm(), configuration: configuration)
        let effects = session.resumeChecks(now: Moment(nanoseconds: 5_000_000_000))
        let starts = effects.compactMap { effect -> (UInt64, Moment)? in
            if case .startCheck(let id, let identity, let deadline) = effect, identity.value == "alice" { return (id, deadline) }
            return nil
        }
        #expect(starts.count == 1)
        #expect(starts.first?.1 == Moment(nanoseconds: 5_000_000_000) + configuration.checkTimeout)
        // The answer to the resumed id is accepted.
        let answer = try session.handle(.availability(check: starts[0].0, .available), now: Moment(nanoseconds: 5_000_000_001))
        #expect(answer.events.contains { if case .validation("username", .ok, _) = $0 { true } else { false } })
    }
}

/// An independent bitwise CRC-32C, to check the codec's table-driven one.
private func crc32c(_ bytes: [UInt8]) -> UInt32 {
    var crc: UInt32 = 0xFFFF_FFFF
    for byte in bytes {
        crc ^= UInt32(byte)
        for _ in 0..<8 { crc = (crc >> 1) ^ (0x82F6_3B78 & (0 &- (crc & 1))) }
    }
    return ~crc
}
