#if canImport(Glibc)
import Glibc
#endif

/// Flushes standard output now (for streaming commands piped into other tools).
func fflushStdout() {
    fflush(nil)
}

