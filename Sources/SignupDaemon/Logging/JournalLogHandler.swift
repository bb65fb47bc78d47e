import CSystemd
import Logging
import UnixIO

/// Sends structured entries to journald with `sd_journal_sendv`: the message, its
/// priority, and each metadata key as an upper-case field (`SIGNUPD_SESSION=...`).
/// Used when `JOURNAL_STREAM` says stderr is connected to the journal.
struct JournalLogHandler: LogHandler {
    var metadata: Logger.Metadata = [:]
    var metadataProvider: Logger.MetadataProvider?
    var logLevel: Logger.Level = .info
    let label: String

    init(label: String) {
        self.label = label
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var merged = metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { $1 } }
        if let extra = event.metadata { merged.merge(extra) { $1 } }
        let keys = merged.keys.sorted()
        var fields = [
            "MESSAGE=\(Self.message(event.message, keys.map { "\($0)=\(Self.plain(merged[$0]!))" }))",
            "PRIORITY=\(Self.priority(event.level))",
            "SYSLOG_IDENTIFIER=signupd",
            "CODE_FILE=\(event.file)",
            "CODE_LINE=\(event.line)",
            "CODE_FUNC=\(event.function)",
        ]
        for key in keys {
            // A list is one field per element (journald allows a field more than once):
            // `journalctl SIGNUPD_USER=vic` matches a summary naming vic among others.
            if case .array(let values) = merged[key]! {
                for value in values { fields.append("SIGNUPD_\(Self.fieldName(key))=\(value)") }
            } else {
                fields.append("SIGNUPD_\(Self.fieldName(key))=\(merged[key]!)")
            }
        }
        Self.send(fields)
    }

    /// What `journalctl` shows: the message, then the metadata as `key=value` (the reason of
    /// a warning is in its metadata; an administrator should not need `-o verbose` for it).
    static func message(_ message: Logger.Message, _ pairs: [String]) -> String {
        pairs.isEmpty ? "\(message)" : "\(message) (\(pairs.joined(separator: ", ")))"
    }

    /// A value as the plain text shows it: quoted (with `\"` and `\\` escaped) when it could
    /// be read as more than one value — it holds `,`, `=`, `(`, `)` or a quote, or is empty —
    /// so that a client's name cannot write `uid=0` into someone else's line.
    static func plain(_ value: Logger.MetadataValue) -> String {
        let text = if case .array(let values) = value { values.map { "\($0)" }.joined(separator: ", ") } else { "\(value)" }
        guard text.isEmpty || text.contains(where: { ",=()\"".contains($0) }) else { return text }
        return "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }

    private static func send(_ fields: [String]) {
        // One contiguous buffer, so every iovec points into storage that outlives the call.
        var bytes: [UInt8] = []
        var ranges: [Range<Int>] = []
        for field in fields {
            let start = bytes.count
            bytes.append(contentsOf: field.utf8)
            ranges.append(start..<bytes.count)
        }
        bytes.withUnsafeMutableBytes { raw in
            guard let base = raw.baseAddress else { return }
            let vectors = ranges.map { iovec(iov_base: base + $0.lowerBound, iov_len: $0.count) }
            guard csystemd_journal_sendv(vectors, Int32(vectors.count)) < 0, let message = ranges.first else { return }
            // Not sent (journald gone, libsystemd unusable): the text on stderr, which systemd
            // connects to the journal's stream, so that the line is not lost.
            let text = raw[message].dropFirst("MESSAGE=".utf8.count)
            _ = UnixIO.writeAll(2, Array("signupd: ".utf8) + text + [0x0A])
        }
    }

    /// Journal field names: upper-case ASCII letters, digits and underscores.
    private static func fieldName(_ key: String) -> String {
        String(key.uppercased().map { $0.isLetter && $0.isASCII || $0.isNumber && $0.isASCII ? $0 : "_" })
    }

    private static func priority(_ level: Logger.Level) -> Int {
        switch level {
        case .trace, .debug: 7
        case .info: 6
        case .notice: 5
        case .warning: 4
        case .error: 3
        case .critical: 2
        }
    }
}
