import NIOCore
import NIOEmbedded
import SignupProtocol
import Testing

/// One connection to the in-process daemon: requests in as bytes, events out as parsed
/// objects, in the order the daemon wrote them.
final class TestClient {
    let channel: NIOAsyncTestingChannel
    let loop: NIOAsyncTestingEventLoop
    private var framer = LineFramer(maxLineBytes: 1 << 24)
    private var lines: [JSONObject] = []

    init(channel: NIOAsyncTestingChannel, loop: NIOAsyncTestingEventLoop) {
        self.channel = channel
        self.loop = loop
    }

    /// Sends raw bytes as one read.
    func sendRaw(_ text: String) async throws {
        try await channel.writeInbound(ByteBuffer(string: text))
    }

    /// Sends one request line.
    func send(_ json: String) async throws {
        try await sendRaw(json + "\n")
    }

    /// The next event, waiting for it if the daemon has not written it yet (work on other
    /// threads: store reads, hashing).
    func next() async throws -> JSONObject {
        while lines.isEmpty {
            let buffer = try await channel.waitForOutboundWrite(as: ByteBuffer.self)
            append(buffer)
        }
        return lines.removeFirst()
    }

    /// Everything written so far and not yet read, without waiting.
    func written() async throws -> [JSONObject] {
        while let buffer = try await channel.readOutbound(as: ByteBuffer.self) { append(buffer) }
        defer { lines.removeAll() }
        return lines
    }

    /// Reads until an event named `event`; returns it and what came before it.
    @discardableResult
    func next(_ event: String) async throws -> (match: JSONObject, before: [JSONObject]) {
        var before: [JSONObject] = []
        while true {
            let message = try await next()
            if message.event == event { return (message, before) }
            before.append(message)
        }
    }

    /// Everything before the `pong` of a fresh ping: the daemon answers in order.
    func sync() async throws -> [JSONObject] {
        try await send(#"{"op":"ping","id":"sync"}"#)
        let (pong, before) = try await next("pong")
        #expect(pong["id"] == .string("sync"))
        return before
    }

    /// Opens the signup form, fills it in, waits for submit to be enabled (the availability
    /// answer comes from the store's threads) and submits; returns the `result`.
    func signUp(_ username: String, _ password: String) async throws -> JSONObject {
        try await send(#"{"op":"open","form":"signup"}"#)
        try await send(#"{"op":"set","field":"username","value":"\#(username)"}"#)
        try await send(#"{"op":"set","field":"password","value":"\#(password)"}"#)
        try await send(#"{"op":"set","field":"repeatedPassword","value":"\#(password)"}"#)
        while try await next()["value"] != .bool(true) {}
        try await send(#"{"op":"submit"}"#)
        return try await next("result").match
    }

    /// The client half-closes: it will send nothing more.
    func shutdownInput() async throws {
        try await loop.executeInContext { [channel] in
            channel.pipeline.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
        }
    }

    /// Closes the connection from the client's side.
    func disconnect() async throws {
        try await channel.close()
    }

    var isOpen: Bool { channel.isActive }

    private func append(_ buffer: ByteBuffer) {
        buffer.withUnsafeReadableBytes { bytes in
            framer.feed(bytes) { frame in
                guard case .line(let line) = frame, let object = try? JSONParser.parse(Array(line)).objectValue else {
                    Issue.record("the daemon wrote a line that is not a JSON object")
                    return
                }
                // Every line the daemon writes must read back through the protocol's decoder.
                if (try? ServerEvent.decode(object))?.isUnknown ?? true { Issue.record("not a protocol event: \(String(decoding: line, as: UTF8.self))") }
                lines.append(object)
            }
        }
    }
}

extension JSONObject {
    var event: String? { self["event"]?.stringValue }
    func string(_ key: String) -> String? { self[key]?.stringValue }
}
