#if canImport(Glibc)
import Glibc
#endif

/// Where signupd listens, as every first-party client looks for it.
public enum SocketPath {
    /// The daemon's socket: `$SIGNUPD_SOCKET`, else `$XDG_RUNTIME_DIR/signupd.sock` if it
    /// exists, else `/run/signupd/signupd.sock` (the packaged system service).
    public static var `default`: String {
        if let value = getenv("SIGNUPD_SOCKET"), value.pointee != 0 { return String(cString: value) }
        if let runtime = getenv("XDG_RUNTIME_DIR"), runtime.pointee != 0 {
            let candidate = "\(String(cString: runtime))/signupd.sock"
            if access(candidate, F_OK) == 0 { return candidate }
        }
        return "/run/signupd/signupd.sock"
    }
}
