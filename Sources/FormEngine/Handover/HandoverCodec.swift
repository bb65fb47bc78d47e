import Dispatch
import FoundationEssentials
import SignupProtocol

/// The handover state's byte format, version 4:
///
///     offset  size  field
///     0       8     magic "SGNDHOVR"
///     8       4     format version, little-endian (4)
///     12      8     payload length in bytes, little-endian
///     20      4     CRC-32C of the payload, little-endian
///     24      n     payload (below)
///
/// The checksum catches a damaged or truncated state (it is not a signature: the memfd is
/// sealed and private to the service). Reading never traps: anything that is not exactly
/// a state of a readable version, of the stated length and checksum, is a
/// `HandoverStateError`.
///
/// Version 2: a session's engine state carries its `FormSession.Phase` (editing, submitting,
/// finished) where version 1 had the flags `busy`, `finished` and `enabled`, and a session
/// record carries its age. Version 1 was never released; a version-1 state is refused
/// (`unsupportedVersion`), and its connections are closed with `bye`.
///
/// Version 3: each form definition is stored once, in `forms`, and a session's engine state
/// names its definition by index (`formIndex`, `HandoverFormTable`); version 2 copied the
/// definition into every session. Version 2 states are still read (an upgrade from a
/// signupd that wrote them carries its sessions); a version-2 signupd refuses a version-3
/// state, so a downgrade says `bye`.
///
/// Version 4 (issue 29): the payload is binary (`BinaryWriter`: LEB128 varints, byte strings
/// as a length and the bytes): the form definitions as JSON (a few, stored once), then the
/// connections' records and the sessions' records, each a count and then each record with its
/// length (`HandoverState+Binary.swift`). Versions 2 and 3 were JSON through `Codable`, and
/// encoding and parsing them was most of a restart's time at 10,000 sessions. States of
/// versions 2 and 3 are still read; a version-3 signupd refuses a version-4 state, so a
/// downgrade says `bye`.
///
/// A state is written within a limit (`encode(_:limit:)`, `--max-handover-bytes`): when the
/// sessions do not all fit, each owner keeps a fair share (`HandoverShare`), and the
/// connections holding a session left out are told so by a `closed` event at the end of
/// their unsent output.
public enum HandoverCodec {
    public static let magic: [UInt8] = Array("SGNDHOVR".utf8)
    public static let version: UInt32 = 4
    /// The versions this signupd reads.
    public static let readableVersions: ClosedRange<UInt32> = 2...4
    /// The largest state a process reads; a writer stays within its own, smaller limit.
    public static let maxReadBytes = 1 << 30
    /// The `reason` of the `closed` event a session left out of a state gets.
    public static let leftOutReason = "restart: its user's sessions were over their fair share of what a restart carries"
    static let headerBytes = 24

    /// What `encode(_:limit:)` wrote, and who lost which sessions and connections to the limit.
    public struct Written: Sendable {
        public var bytes: [UInt8]
        /// Sessions left out, by owner ("uid N", or "uid N client C").
        public var leftOut: [String: Int]
        /// Connections not carried, by owner: their bytes in flight were over its share.
        public var connectionsLeftOut: [String: Int] = [:]
    }

    public static func encode(_ state: HandoverState) throws -> [UInt8] {
        try encode(state, limit: .max).bytes
    }

    /// The state in at most `limit` bytes: everything if it fits, else each owner's fair
    /// share (`HandoverShare`) of its sessions and of its connections' bytes in flight
    /// (unsent output, unhandled input), so that no user's traffic can take the others'
    /// places: a connection left out is not carried (the next process says `bye` on it)
    /// and the sessions it owned wait for `resume`; the connections holding a session
    /// left out get its `closed`.
    public static func encode(_ state: HandoverState, limit: Int) throws -> Written {
        let table = HandoverFormTable()
        // Each record once: its size decides whether it fits, and the payload is made of these.
        let records = sessionRecords(state.sessions, forms: table)
        let connectionRecords = state.connections.map(record(of:))
        let owners = state.sessions.map(owner) + state.connections.map(owner)
        let sizes = (records + connectionRecords).map { $0.count + varintSize($0.count) }
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let forms = [UInt8](try encoder.encode(table.forms))
        var budget = limit - headerBytes - 64 - forms.count
        // Which connections hold each session, found once (not a search per session left out).
        var holders: [String: [Int]] = [:]
        for (index, connection) in state.connections.enumerated() {
            for id in connection.sessions { holders[id, default: []].append(index) }
        }
        for _ in 0..<4 {
            let keep = HandoverShare.keep(sizes: sizes, owners: owners, limit: budget)
            let keptSession = keep[..<records.count]
            let keptConnection = Array(keep[records.count...])
            var connections = state.connections
            var leftOut: [String: Int] = [:]
            var connectionsLeftOut: [String: Int] = [:]
            var dropped = Set<String>()
            // Connections told of a session left out: re-encoded (the rest use their record as made).
            var told = Set<Int>()
            for index in connections.indices where !keptConnection[index] {
                dropped.insert(connections[index].name)
                connectionsLeftOut[owners[records.count + index], default: 0] += 1
            }
            for index in records.indices where !keptSession[index] {
                let id = state.sessions[index].id
                leftOut[owners[index], default: 0] += 1
                let closed = ServerEvent.closed(session: id, reason: leftOutReason, id: nil).line
                for holder in holders[id] ?? [] where keptConnection[holder] {
                    connections[holder].sessions.removeAll { $0 == id }
                    connections[holder].unsent.bytes += closed
                    told.insert(holder)
                }
            }
            var payload = BinaryWriter(capacity: headerBytes + min(limit, sizes.reduce(forms.count + 32, +)))
            payload.data(forms)
            payload.varint(keptConnection.lazy.filter { $0 }.count)
            for index in connections.indices where keptConnection[index] {
                payload.data(told.contains(index) ? record(of: connections[index]) : connectionRecords[index])
            }
            payload.varint(keptSession.lazy.filter { $0 }.count)
            for index in records.indices where keptSession[index] {
                // Its owner's or views' connection is not carried: waits for `resume`, or goes on
                // without the view. (Known by looking, not by comparing with the original: a
                // session's comparison includes its whole form definition.)
                var session = state.sessions[index]
                guard !dropped.isEmpty, session.owner.map(dropped.contains) == true || session.views.contains(where: dropped.contains) else {
                    payload.data(records[index])
                    continue
                }
                if let owner = session.owner, dropped.contains(owner) {
                    session.owner = nil
                    session.detachedNanoseconds = session.detachedNanoseconds ?? 0
                }
                session.views.removeAll { dropped.contains($0) }
                payload.data(record(of: session, forms: table))
            }
            let total = headerBytes + payload.bytes.count
            if total <= limit { return Written(bytes: framed(payload.bytes), leftOut: leftOut, connectionsLeftOut: connectionsLeftOut) }
            // The closed events made the connections bigger: fit the rest in less.
            budget -= total - limit
        }
        throw HandoverStateError.tooLarge(limit: limit)
    }

    /// The sessions' records, written on every core at once (each core a contiguous run, in
    /// order); the form table is filled first, so that the cores only read it.
    private static func sessionRecords(_ sessions: [HandoverState.SessionRecord], forms: HandoverFormTable) -> [[UInt8]] {
        for session in sessions { _ = forms.index(of: session.form.form) }
        let chunks = sessions.count < 512 ? 1 : min(ProcessInfo.processInfo.activeProcessorCount, 8)
        let perChunk = (sessions.count + chunks - 1) / max(1, chunks)
        let results = ChunkResults<[[UInt8]]>(count: chunks, initial: [])
        DispatchQueue.concurrentPerform(iterations: chunks) { chunk in
            let run = sessions[min(sessions.count, chunk * perChunk)..<min(sessions.count, (chunk + 1) * perChunk)]
            results.set(chunk) { run.map { record(of: $0, forms: forms) } }
        }
        return results.all.flatMap { $0 }
    }

    /// The sessions' records, read on every core at once (a restart of 10,000 sessions waits
    /// for this): each core reads a contiguous run of them; the first error, by position, is thrown.
    private static func decodeSessions(_ bytes: [UInt8], at ranges: [Range<Int>], forms: [FormDefinition]) throws(HandoverStateError) -> [HandoverState.SessionRecord] {
        let chunks = ranges.count < 512 ? 1 : min(ProcessInfo.processInfo.activeProcessorCount, 8)
        let perChunk = (ranges.count + chunks - 1) / max(1, chunks)
        let results = ChunkResults<Result<[HandoverState.SessionRecord], HandoverStateError>>(count: chunks, initial: .success([]))
        DispatchQueue.concurrentPerform(iterations: chunks) { chunk in
            let run = ranges[min(ranges.count, chunk * perChunk)..<min(ranges.count, (chunk + 1) * perChunk)]
            results.set(chunk) {
                Result { () throws(HandoverStateError) in
                    try run.map { range throws(HandoverStateError) in
                        var record = BinaryReader(bytes, from: range.lowerBound, to: range.upperBound)
                        let session = try HandoverState.SessionRecord(reading: &record, forms: forms)
                        try record.finished("session \(session.id)'s record")
                        return session
                    }
                }
            }
        }
        var sessions: [HandoverState.SessionRecord] = []
        sessions.reserveCapacity(ranges.count)
        for result in results.all { sessions += try result.get() }
        return sessions
    }

    private static func record(of session: HandoverState.SessionRecord, forms: HandoverFormTable) -> [UInt8] {
        var writer = BinaryWriter(capacity: 256)
        session.write(to: &writer, forms: forms)
        return writer.bytes
    }

    private static func record(of connection: HandoverState.ConnectionRecord) -> [UInt8] {
        var writer = BinaryWriter(capacity: 64 + connection.unsent.bytes.count + connection.partial.bytes.count)
        connection.write(to: &writer)
        return writer.bytes
    }

    private static func varintSize(_ value: Int) -> Int {
        var size = 1
        var rest = UInt(value) >> 7
        while rest > 0 {
            size += 1
            rest >>= 7
        }
        return size
    }

    /// Whom a session is charged to in `HandoverShare`.
    static func owner(of session: HandoverState.SessionRecord) -> String {
        owner(uid: session.uid, client: session.client)
    }

    /// Whom a connection's bytes in flight are charged to: the same owner as its sessions.
    static func owner(of connection: HandoverState.ConnectionRecord) -> String {
        owner(uid: connection.uid, client: connection.client)
    }

    private static func owner(uid: UInt32?, client: String?) -> String {
        let uid = uid.map { "uid \($0)" } ?? "uid ?"
        return client.map { "\(uid) client \($0)" } ?? uid
    }

    private static func framed(_ payload: [UInt8]) -> [UInt8] {
        var bytes = magic
        bytes.reserveCapacity(headerBytes + payload.count)
        append(version, to: &bytes)
        append(UInt64(payload.count), to: &bytes)
        append(CRC32C.checksum(payload), to: &bytes)
        bytes.append(contentsOf: payload)
        return bytes
    }

    public static func decode(_ bytes: [UInt8]) throws(HandoverStateError) -> HandoverState {
        guard bytes.count >= magic.count, Array(bytes[0..<magic.count]) == magic else { throw .notHandoverState }
        guard bytes.count >= headerBytes else { throw .truncated(expected: headerBytes, got: bytes.count) }
        let version = UInt32(read(bytes, at: 8, count: 4))
        guard readableVersions.contains(version) else { throw .unsupportedVersion(version) }
        let length = read(bytes, at: 12, count: 8)
        let available = UInt64(bytes.count - headerBytes)
        guard length <= available else { throw .truncated(expected: headerBytes + Int(clamping: length), got: bytes.count) }
        guard length == available else { throw .malformed("\(available - length) bytes after the payload") }
        let payload = bytes[headerBytes...]
        guard UInt32(read(bytes, at: 20, count: 4)) == CRC32C.checksum(payload) else { throw .checksumMismatch }
        let state = version >= 4 ? try decodeBinary(bytes) : try decodeJSON(payload)
        try state.validate()
        return state
    }

    /// Versions 2 and 3: the payload is JSON.
    private static func decodeJSON(_ payload: ArraySlice<UInt8>) throws(HandoverStateError) -> HandoverState {
        do {
            let decoder = JSONDecoder()
            decoder.userInfo[HandoverFormTable.key] = HandoverFormTable()
            return try decoder.decode(HandoverState.self, from: Data(payload))
        } catch {
            throw .malformed("the payload does not decode: \(error)")
        }
    }

    /// Version 4: the form definitions (JSON, a few), then each connection's and each
    /// session's record, each with its length, which it must use exactly.
    private static func decodeBinary(_ bytes: [UInt8]) throws(HandoverStateError) -> HandoverState {
        var reader = BinaryReader(bytes, from: headerBytes)
        let formBytes = try reader.span("the form definitions")
        let forms: [FormDefinition]
        do {
            forms = try JSONDecoder().decode([FormDefinition].self, from: Data(bytes[formBytes]))
        } catch {
            throw .malformed("the form definitions do not decode: \(error)")
        }
        let connections = try reader.array("the connections") { reader throws(HandoverStateError) in
            let range = try reader.span("a connection's record")
            var record = BinaryReader(bytes, from: range.lowerBound, to: range.upperBound)
            let connection = try HandoverState.ConnectionRecord(reading: &record)
            try record.finished("connection \(connection.name)'s record")
            return connection
        }
        let sessionRanges = try reader.array("the sessions") { reader throws(HandoverStateError) in try reader.span("a session's record") }
        let sessions = try decodeSessions(bytes, at: sessionRanges, forms: forms)
        try reader.finished("the payload")
        return HandoverState(sessions: sessions, connections: connections)
    }

    private static func append<Value: FixedWidthInteger>(_ value: Value, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    private static func read(_ bytes: [UInt8], at offset: Int, count: Int) -> UInt64 {
        var value: UInt64 = 0
        for index in (0..<count).reversed() { value = value << 8 | UInt64(bytes[offset + index]) }
        return value
    }
}

/// One slot per chunk of a `concurrentPerform`: each iteration writes only its own slot, and
/// the slots are read after it returned (which waits for every iteration).
/// (A buffer, not an array property: two threads modifying one stored array at once trap
/// the exclusivity check, even on different elements.)
private final class ChunkResults<Value>: @unchecked Sendable {
    private let slots: UnsafeMutableBufferPointer<Value>

    init(count: Int, initial: Value) {
        slots = .allocate(capacity: count)
        slots.initialize(repeating: initial)
    }

    deinit {
        slots.deinitialize()
        slots.deallocate()
    }

    func set(_ index: Int, _ make: () -> Value) {
        slots[index] = make()
    }

    var all: [Value] { Array(slots) }
}

/// Why a handover state cannot be used. `reason` is what clients are told in `bye`.
public enum HandoverStateError: Error, Equatable, Sendable {
    /// It does not start with the magic: not a handover state at all.
    case notHandoverState
    /// Written by a signupd whose format this one does not read.
    case unsupportedVersion(UInt32)
    /// Shorter than its header says.
    case truncated(expected: Int, got: Int)
    /// The payload's checksum does not match: damaged.
    case checksumMismatch
    /// The payload is not a consistent state.
    case malformed(String)
    /// The descriptor could not be read, or is not a sealed memfd.
    case unreadable(String)
    /// Even without its sessions the state does not fit the writer's limit.
    case tooLarge(limit: Int)

    /// A short stable phrase for logs and for the `bye` reason.
    public var reason: String {
        switch self {
        case .notHandoverState: "not a handover state"
        case .unsupportedVersion(let version): "state format version \(version) is not supported (this signupd reads versions \(HandoverCodec.readableVersions.lowerBound) to \(HandoverCodec.readableVersions.upperBound))"
        case .truncated(let expected, let got): "state truncated (\(got) of \(expected) bytes)"
        case .checksumMismatch: "state checksum mismatch"
        case .malformed(let why): "state malformed: \(why)"
        case .unreadable(let why): "state unreadable: \(why)"
        case .tooLarge(let limit): "state larger than \(limit) bytes even without its sessions"
        }
    }
}

/// CRC-32C (Castagnoli), bitwise-table implementation.
enum CRC32C {
    private static let table: [UInt32] = (0..<256).map { index in
        var crc = UInt32(index)
        for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0x82F6_3B78 : crc >> 1 }
        return crc
    }

    static func checksum<Bytes: Sequence>(_ bytes: Bytes) -> UInt32 where Bytes.Element == UInt8 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes { crc = table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
        return crc ^ 0xFFFF_FFFF
    }
}

/// Standard base64 for `HandoverBytes`.
enum Base64 {
    static func encode(_ bytes: [UInt8]) -> String { Data(bytes).base64EncodedString() }
    static func decode(_ text: String) -> [UInt8]? { Data(base64Encoded: text).map { [UInt8]($0) } }
}
