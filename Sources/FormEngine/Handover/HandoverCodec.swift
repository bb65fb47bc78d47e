import FoundationEssentials
import SignupProtocol

/// The handover state's byte format, version 3:
///
///     offset  size  field
///     0       8     magic "SGNDHOVR"
///     8       4     format version, little-endian (3)
///     12      8     payload length in bytes, little-endian
///     20      4     CRC-32C of the payload, little-endian
///     24      n     payload: the `HandoverState` as JSON
///
/// The checksum catches a damaged or truncated state (it is not a signature: the memfd is
/// sealed and private to the service). Reading never traps: anything that is not exactly
/// a version-2 state of the stated length and checksum is a `HandoverStateError`.
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
/// A state is written within a limit (`encode(_:limit:)`, `--max-handover-bytes`): when the
/// sessions do not all fit, each owner keeps a fair share (`HandoverShare`), and the
/// connections holding a session left out are told so by a `closed` event at the end of
/// their unsent output.
public enum HandoverCodec {
    public static let magic: [UInt8] = Array("SGNDHOVR".utf8)
    public static let version: UInt32 = 3
    /// The versions this signupd reads.
    public static let readableVersions: ClosedRange<UInt32> = 2...3
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
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        encoder.userInfo[HandoverFormTable.key] = table
        // Each record once: its size decides whether it fits, and the payload is made of these.
        let records = try state.sessions.map { [UInt8](try encoder.encode($0)) }
        let connectionRecords = try state.connections.map { [UInt8](try encoder.encode($0)) }
        let owners = state.sessions.map(owner) + state.connections.map(owner)
        let sizes = (records + connectionRecords).map { $0.count + 1 }
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
                }
            }
            var payload: [UInt8] = Array(#"{"connections":["#.utf8)
            var first = true
            for index in connections.indices where keptConnection[index] {
                if !first { payload.append(UInt8(ascii: ",")) }
                first = false
                payload += connections[index] == state.connections[index] ? connectionRecords[index] : [UInt8](try encoder.encode(connections[index]))
            }
            payload += Array(#"],"forms":"#.utf8) + forms + Array(#","sessions":["#.utf8)
            first = true
            for index in records.indices where keptSession[index] {
                if !first { payload.append(UInt8(ascii: ",")) }
                first = false
                var session = state.sessions[index]
                // Its owner's or views' connection is not carried: waits for `resume`, or goes on without the view.
                if let owner = session.owner, dropped.contains(owner) {
                    session.owner = nil
                    session.detachedNanoseconds = session.detachedNanoseconds ?? 0
                }
                session.views.removeAll { dropped.contains($0) }
                payload += session == state.sessions[index] ? records[index] : [UInt8](try encoder.encode(session))
            }
            payload += Array("]}".utf8)
            let total = headerBytes + payload.count
            if total <= limit { return Written(bytes: framed(payload), leftOut: leftOut, connectionsLeftOut: connectionsLeftOut) }
            // The closed events made the connections bigger: fit the rest in less.
            budget -= total - limit
        }
        throw HandoverStateError.tooLarge(limit: limit)
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
        let state: HandoverState
        do {
            let decoder = JSONDecoder()
            decoder.userInfo[HandoverFormTable.key] = HandoverFormTable()
            state = try decoder.decode(HandoverState.self, from: Data(payload))
        } catch {
            throw .malformed("the payload does not decode: \(error)")
        }
        try state.validate()
        return state
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
