import FormEngine
import Logging
import UnixSignals

/// `systemctl reload signupd` (SIGHUP): re-reads the form and message directories. New
/// sessions get the new definitions; open sessions keep the ones they were opened with.
/// A configuration with errors is refused as a whole (each error logged with its
/// location) and the running one stays. Speaks systemd's `Type=notify-reload` protocol:
/// `RELOADING=1` with `MONOTONIC_USEC=`, then `READY=1`.
struct FormReloader: Sendable {
    let directories: FormDirectories
    let holder: FormLibraryHolder
    let lastGood: LastGoodForms?
    let notifier: ServiceNotifier
    let logger: Logger

    /// Traps SIGHUP (before the daemon is ready, so that an early reload cannot kill it)
    /// and returns the task that serves reloads until cancelled.
    static func start(_ reloader: FormReloader) async -> Task<Void, Never> {
        let signals = await UnixSignalsSequence(trapping: .sighup)
        return Task {
            for await _ in signals {
                if Task.isCancelled { break }
                reloader.reload()
            }
        }
    }

    /// One reload; returns whether the new configuration was applied.
    @discardableResult
    func reload() -> Bool {
        notifier.reloading()
        defer { notifier.readyAgain() }
        switch directories.loadWithSources() {
        case .success(let loaded):
            let library = loaded.library
            holder.replace(with: library)
            FormStartup.keep(loaded.sources, in: lastGood, now: Int64(wallClockSeconds()), logger: logger)
            for warning in library.warnings { logger.warning("\(warning.description)") }
            logger.notice("forms reloaded", metadata: ["forms": "\(library.forms.map(\.name).joined(separator: ","))", "locales": "\(library.catalogues.locales.joined(separator: ","))"])
            return true
        case .failure(let errors):
            for error in errors.errors { logger.error("\(error.description)") }
            logger.error("reload refused: the form configuration has \(errors.errors.count) error(s); the previous one stays in use")
            return false
        }
    }
}
