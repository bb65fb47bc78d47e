/// Why the daemon cannot start or must stop; the message is for the administrator.
enum DaemonError: Error, CustomStringConvertible {
    case startup(String)

    var description: String {
        switch self {
        case .startup(let message): message
        }
    }
}

#if canImport(Glibc)
import Glibc
#endif

/// `strerror` for an errno value.
func errnoText(_ code: Int32) -> String {
    String(cString: strerror(code))
}
