/// Splits a byte stream into NDJSON lines: `\n` ends a line and a `\r` before it is
/// dropped. A line longer than the limit is reported once as `.tooLong` and the rest of
/// it, up to the next `\n`, is discarded, so the stream stays in step.
public struct LineFramer: Sendable {
    /// One unit of framed input.
    public enum Frame {
        /// A complete line, without its terminator. Valid only during the callback.
        case line(UnsafeRawBufferPointer)
        /// A line exceeded the limit and is being discarded.
        case tooLong
    }

    public let maxLineBytes: Int
    /// The unterminated tail buffered so far.
    public private(set) var partial: [UInt8] = []
    /// True while the rest of an overlong line is being skipped.
    public private(set) var discarding = false

    /// Bytes of an unterminated line held until its end arrives.
    public var bufferedBytes: Int { partial.count }

    public init(maxLineBytes: Int) {
        self.maxLineBytes = maxLineBytes
    }

    /// A framer that carries on from a saved `partial` and `discarding` (a daemon handing
    /// its connections to its next process).
    public init(maxLineBytes: Int, partial: [UInt8], discarding: Bool) {
        self.maxLineBytes = maxLineBytes
        self.partial = partial
        self.discarding = discarding
    }

    /// Feeds the next chunk of the stream; `body` sees every frame it completes, in order.
    public mutating func feed(_ chunk: UnsafeRawBufferPointer, _ body: (Frame) throws -> Void) rethrows {
        var start = 0
        while start < chunk.count {
            guard let newline = ByteSearch.first(0x0A, in: chunk, from: start) else {
                try absorb(UnsafeRawBufferPointer(rebasing: chunk[start...]), body)
                return
            }
            let piece = UnsafeRawBufferPointer(rebasing: chunk[start..<newline])
            start = newline + 1
            if discarding {
                discarding = false
                continue
            }
            if partial.isEmpty {
                guard piece.count <= maxLineBytes + 1 else {
                    try body(.tooLong)
                    continue
                }
                try deliver(piece, body)
            } else {
                guard partial.count + piece.count <= maxLineBytes + 1 else {
                    partial.removeAll(keepingCapacity: false)
                    try body(.tooLong)
                    continue
                }
                partial.append(contentsOf: piece)
                let line = partial
                // A long line's buffer is not kept for the rest of the connection.
                partial.removeAll(keepingCapacity: line.count <= 4096)
                try line.withUnsafeBytes { try deliver($0, body) }
            }
        }
    }

    /// Ends the stream: an unterminated last line is delivered as if it had its `\n`.
    public mutating func finish(_ body: (Frame) throws -> Void) rethrows {
        defer {
            partial.removeAll()
            discarding = false
        }
        guard !discarding, !partial.isEmpty else { return }
        try partial.withUnsafeBytes { try deliver($0, body) }
    }

    /// Keeps an unterminated tail, or starts discarding once it can no longer fit.
    private mutating func absorb(_ tail: UnsafeRawBufferPointer, _ body: (Frame) throws -> Void) rethrows {
        guard !discarding else { return }
        // One byte of slack for a `\r` that may precede the coming `\n`.
        if partial.count + tail.count > maxLineBytes + 1 {
            partial.removeAll(keepingCapacity: false)
            discarding = true
            try body(.tooLong)
        } else {
            partial.append(contentsOf: tail)
        }
    }

    private func deliver(_ piece: UnsafeRawBufferPointer, _ body: (Frame) throws -> Void) rethrows {
        var line = piece
        if let last = line.last, last == 0x0D {
            line = UnsafeRawBufferPointer(rebasing: line.dropLast())
        }
        guard line.count <= maxLineBytes else {
            try body(.tooLong)
            return
        }
        try body(.line(line))
    }
}
