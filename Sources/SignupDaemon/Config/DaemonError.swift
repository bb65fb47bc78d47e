/// Why the daemon cannot start or must stop; the message is for the administrator.
enum DaemonError: Error, CustomStringConvertible {
    case startup(String)

    var description: String {
        switch self {
        case .startup(let message): message
        }
    }
}
