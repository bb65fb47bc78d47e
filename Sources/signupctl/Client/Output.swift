#if canImport(Glibc)
import Glibc
#endif

/// Flushes standard output now (for streaming commands piped into other tools).
func fflushStdout() {
    fflush(nil)
}

/// Writes bytes to a file descriptor, whole.
func writeAll(_ fd: Int32, _ bytes: [UInt8]) {
    var offset = 0
    while offset < bytes.count {
        let written = bytes[offset...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        if written < 0 && errno == EINTR { continue }
        guard written > 0 else { return }
        offset += written
    }
}
