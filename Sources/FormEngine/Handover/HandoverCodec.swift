import FoundationEssentials

/// The handover state's byte format, version 2:
///
///     offset  size  field
///     0       8     magic "SGNDHOVR"
///     8       4     format version, little-endian (2)
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
public enum HandoverCodec {
    public static let magic: [UInt8] = Array("SGNDHOVR".utf8)
    public static let version: UInt32 = 2
    static let headerBytes = 24

    public static func encode(_ state: HandoverState) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let payload = [UInt8](try encoder.encode(state))
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
        guard version == Self.version else { throw .unsupportedVersion(version) }
        let length = read(bytes, at: 12, count: 8)
        let available = UInt64(bytes.count - headerBytes)
        guard length <= available else { throw .truncated(expected: headerBytes + Int(clamping: length), got: bytes.count) }
        guard length == available else { throw .malformed("\(available - length) bytes after the payload") }
        let payload = bytes[headerBytes...]
        guard UInt32(read(bytes, at: 20, count: 4)) == CRC32C.checksum(payload) else { throw .checksumMismatch }
        let state: HandoverState
        do {
            state = try JSONDecoder().decode(HandoverState.self, from: Data(payload))
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

    /// A short stable phrase for logs and for the `bye` reason.
    public var reason: String {
        switch self {
        case .notHandoverState: "not a handover state"
        case .unsupportedVersion(let version): "state format version \(version) is not supported (this signupd reads version \(HandoverCodec.version))"
        case .truncated(let expected, let got): "state truncated (\(got) of \(expected) bytes)"
        case .checksumMismatch: "state checksum mismatch"
        case .malformed(let why): "state malformed: \(why)"
        case .unreadable(let why): "state unreadable: \(why)"
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
