/// When signupd's `main` began: the `serving` line's `startup=` counts from here, so that
/// reading the command line is a stage like the others, `arguments`.
public enum MainStarted {
    /// Called first by signupd's `main`, before it starts anything that could read `at`.
    public static func mark() {
        if instant == nil { instant = .now }
    }

    /// The instant `mark` was called; nil in a process that is not signupd (the tests).
    static var at: ContinuousClock.Instant? { instant }

    /// Written once, first thing in `main`, and only read after: whatever reads it runs on
    /// a task or thread started later, which orders the write before the read. A locked
    /// box was generic metadata made at run time, about 0.1 ms of every cold start.
    nonisolated(unsafe) private static var instant: ContinuousClock.Instant?
}
