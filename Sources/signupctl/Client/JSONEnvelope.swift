import SignupProtocol
import UnixIO

#if canImport(Glibc)
import Glibc
#endif

/// The one JSON shape every subcommand prints with `--json`, on standard output, whether
/// it worked or not:
///
///     {"ok":true,"command":"login","user":"alice","token":"…","session":"…"}
///     {"ok":false,"command":"login","error":{"code":"refused","message":"…","exitCode":1}}
///
/// Members after `command` depend on the command (signupctl(1) lists them); protocol
/// request ids never appear. The exit status is the same as without `--json`.
struct JSONEnvelope {
    private var object: JSONObject

    /// Starts a success envelope; add members, then `emit()`.
    init(command: String) {
        object = JSONObject([.init(key: "ok", value: .bool(true)), .init(key: "command", value: .string(command))])
    }

    private init(failure: CommandFailure, command: String) {
        var error = JSONObject([
            .init(key: "code", value: .string(failure.code)),
            .init(key: "message", value: .string(failure.description)),
            .init(key: "exitCode", value: .number(String(failure.status.rawValue))),
        ])
        if let messageId = failure.messageId { error.members.append(.init(key: "messageId", value: .string(messageId))) }
        object = JSONObject([
            .init(key: "ok", value: .bool(false)), .init(key: "command", value: .string(command)),
            .init(key: "error", value: .object(error)),
        ])
    }

    mutating func member(_ key: String, _ value: String) { member(key, json: .string(value)) }
    mutating func member(_ key: String, _ value: Int) { member(key, json: .number(String(value))) }
    mutating func member(_ key: String, _ value: Bool) { member(key, json: .bool(value)) }

    mutating func member(_ key: String, json value: JSONValue) {
        object.members.removeAll { $0.key == key }
        object.members.append(.init(key: key, value: value))
    }

    /// Copies every member of a protocol message except its `id` (for `monitor`). The
    /// envelope's `ok` says signupctl worked; the event's own `ok` (a `result`'s outcome)
    /// is carried as `eventOk` so that a failed login never reads as `"ok":true`.
    mutating func members(of message: JSONObject) {
        for member in message.members where !["id", "ok", "command", "eventOk"].contains(member.key) {
            self.member(member.key, json: member.value)
        }
        if let ok = message["ok"] { self.member("eventOk", json: ok) }
    }

    /// Writes the object as one line to standard output.
    func emit() {
        fflush(nil)
        UnixIO.writeAll(1, Array(RawLine.text(of: object).utf8) + [0x0A])
    }

    /// Prints the failure envelope for `command`.
    static func emitFailure(_ failure: CommandFailure, command: String) {
        JSONEnvelope(failure: failure, command: command).emit()
    }
}
