import NIOConcurrencyHelpers

/// When signupd's `main` began: the `serving` line's `startup=` counts from here, so that
/// reading the command line (ArgumentParser's reflection over some sixty options: about
/// 3 ms of a release build's start, BENCHMARKS.md) is a stage like the others, `arguments`.
public enum MainStarted {
    /// Called first by signupd's `main`.
    public static func mark() {
        instant.withLockedValue { $0 = $0 ?? .now }
    }

    /// The instant `mark` was called; nil in a process that is not signupd (the tests).
    static var at: ContinuousClock.Instant? { instant.withLockedValue { $0 } }

    private static let instant = NIOLockedValueBox<ContinuousClock.Instant?>(nil)
}
