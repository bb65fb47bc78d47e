import Logging
import NIOCore
import NIOWebSocket
import SignupClient
import SignupProtocol
import Synchronization

/// One browser's WebSocket: one signupd connection speaking for that browser, the line
/// protocol carried one JSON message per text frame, both ways, within RelayRules.
struct WebSocketRelay: Sendable {
    let configuration: WebConfiguration
    let claims: LoginClaims
    let logger: Logger

    func run(_ channel: NIOAsyncChannel<WebSocketFrame, WebSocketFrame>, flow: BrowserFlow) async {
        try? await channel.executeThenClose { inbound, outbound in
            let connected: Result<SignupConnection, SignupClientError>
            do throws(SignupClientError) {
                connected = .success(try await SignupConnection.connect(
                    to: configuration.socketPath,
                    configuration: .init(eventBufferLimit: 1024, maxLineBytes: 1 << 20, speaksFor: flow.client)))
            } catch {
                connected = .failure(error)
            }
            let connection: SignupConnection
            switch connected {
            case .success(let made): connection = made
            case .failure(let error):
                // What the daemon said at the door (limits, shutting down), or that it is not there.
                let reason: String = switch error {
                case .refusedAtDoor(_, let refusal), .refused(let refusal): refusal.message
                default: "signupd is not reachable"
                }
                if case .refused(let refusal) = error, refusal.code == .known(.forbidden) { NotTrusted.report(refusal.message, logger: logger) }
                try await outbound.write(Self.text(["event": "bye", "reason": reason]))
                try await outbound.write(Self.close(.unexpectedServerError))
                return
            }
            var hello = connection.info.hello.members
            hello.append(.init(key: "bridge", value: .string("signupd-web/\(SignupWebVersion.current)")))
            // Subscribed before the page's first request can be forwarded: no answer slips by.
            let messages = connection.messages()
            try await outbound.write(Self.frame(JSONObject(hello)))
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    // signupd → the page, until signupd ends the connection (its bye is passed on).
                    for await message in messages {
                        guard var object = RelayRules.toBrowser(message.members) else { continue }
                        if message.isResult, let token = message.members["token"]?.stringValue {
                            let claim = claims.keep(token: token, user: message.members["user"]?.stringValue ?? "", flow: flow.id)
                            object = RelayRules.withClaim(object, claim: claim)
                        }
                        do { try await outbound.write(Self.frame(object)) } catch { return }
                    }
                    try? await outbound.write(Self.close(.goingAway))
                }
                group.addTask {
                    // The page → signupd, until the page goes, at most as fast as its budgets allow.
                    var frames = FrameBudget(perSecond: configuration.framesPerSecond, burst: configuration.frameBurst)
                    var describes = FrameBudget(perSecond: configuration.describesPerSecond, burst: configuration.describeBurst)
                    let maxLine = connection.info.limits.maxLineBytes
                    do {
                        for try await frame in inbound {
                            switch frame.opcode {
                            case .text:
                                var decision = RelayRules.fromBrowser(Array(buffer: frame.unmaskedData))
                                if case .forward(let line) = decision {
                                    var wait = frames.take()
                                    if line["op"] == .string("describe") { wait = max(wait, describes.take()) }
                                    if wait > .zero { try await Task.sleep(for: wait) }
                                    decision = RelayRules.fitting(line, maxLineBytes: maxLine)
                                }
                                switch decision {
                                case .forward(let line): try await connection.send(line: line)
                                case .answer(let answer): try await outbound.write(Self.frame(answer))
                                }
                            case .binary:
                                try await outbound.write(Self.frame(RelayRules.error("invalid_request", "send each request as a text frame", id: nil)))
                            case .ping:
                                try await outbound.write(WebSocketFrame(fin: true, opcode: .pong, data: frame.unmaskedData))
                            case .connectionClose:
                                try await outbound.write(Self.close(.normalClosure))
                                return
                            default:
                                continue
                            }
                        }
                    } catch {
                        return
                    }
                }
                await group.next()
                group.cancelAll()
            }
            // A closed page leaves its sessions waiting for `resume` (signupd's grace), as a
            // dropped connection does: a reload takes them back.
            await connection.close()
        }
    }

    static func frame(_ object: JSONObject) -> WebSocketFrame {
        WebSocketFrame(fin: true, opcode: .text, data: ByteBuffer(string: RelayRules.text(object)))
    }

    static func text(_ members: KeyValuePairs<String, String>) -> WebSocketFrame {
        frame(JSONObject(members.map { .init(key: $0.key, value: .string($0.value)) }))
    }

    static func close(_ code: WebSocketErrorCode) -> WebSocketFrame {
        var data = ByteBuffer()
        data.write(webSocketErrorCode: code)
        return WebSocketFrame(fin: true, opcode: .connectionClose, data: data)
    }
}

/// signupd refused to let this bridge name its visitors: said once, loudly, with the fix.
enum NotTrusted {
    private static let said = Atomic<Bool>(false)

    static func report(_ message: String, logger: Logger) {
        guard !said.exchange(true, ordering: .relaxed) else { return }
        logger.error("signupd does not trust this bridge to speak for its visitors (\(message)): run signupd-web as a member of signupd's --trusted-bridge-group (the package's signupd-bridges) or name its user with --trusted-bridge-uid; no page can work until then")
    }
}

enum SignupWebVersion {
    static let current = "0.1.0"
}
