import FormEngine
import Logging

#if canImport(Glibc)
import Glibc
#endif

/// The forms a start serves: the directories' when they load (kept then as the last good
/// configuration), else the last good configuration with the reason logged, else none (the
/// start fails, as it did before anything ever loaded here).
enum FormStartup {
    static func load(_ directories: FormDirectories, lastGood: LastGoodForms?, now: Int64, logger: Logger) throws(DaemonError) -> FormLibraryHolder {
        switch directories.loadWithSources() {
        case .success(let loaded):
            // Which forms and locales are served is said by the `serving` line: under systemd,
            // a journal line here would open libsystemd before the socket is served.
            keep(loaded.sources, in: lastGood, now: now, logger: logger)
            // What loads but is likely wrong (`--check-config` prints the same); none usually,
            // so no journal line on the way to the socket.
            for warning in loaded.library.warnings { logger.warning("\(warning.description)") }
            return FormLibraryHolder(loaded.library)
        case .failure(let errors):
            for error in errors.errors { logger.error("\(error.description)") }
            let refusal = "the form configuration has \(errors.errors.count) error\(errors.errors.count == 1 ? "" : "s"); check it with signupd --check-config"
            guard let lastGood else { throw .startup(refusal) }
            let saved: LastGoodForms.Saved
            switch lastGood.load() {
            case .success(let found): saved = found
            case .failure(let why): throw .startup("\(refusal); no last good configuration to serve instead: \(why)")
            }
            guard case .success(let library) = saved.sources.build() else {
                throw .startup("\(refusal); the last good configuration in \(lastGood.path) no longer loads either")
            }
            // What the saved configuration still warns of (helper-50: not said on this path).
            for warning in library.warnings { logger.warning("\(warning.description)") }
            let fallback = FormFallback(errorCount: errors.errors.count, firstError: errors.errors.first?.description ?? "?", savedAt: saved.savedAt)
            logger.error("\(fallback.summary), saved \(utc(saved.savedAt)) in \(lastGood.path); fix the files, then systemctl reload signupd", metadata: [
                "forms": "\(library.forms.map(\.name).joined(separator: ","))",
            ])
            return FormLibraryHolder(library, fallback: fallback)
        }
    }

    /// `2026-11-26 15:59:32 UTC`.
    private static func utc(_ seconds: Int64) -> String {
        var time = time_t(seconds)
        var parts = tm()
        gmtime_r(&time, &parts)
        var buffer = [CChar](repeating: 0, count: 32)
        let count = strftime(&buffer, buffer.count, "%Y-%m-%d %H:%M:%S UTC", &parts)
        return String(decoding: buffer.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Saves `sources` as the last good configuration; a failure costs a warning only.
    static func keep(_ sources: FormSources, in lastGood: LastGoodForms?, now: Int64, logger: Logger) {
        guard let lastGood else { return }
        do {
            try lastGood.save(sources, now: now)
        } catch {
            logger.warning("the last good form configuration is not kept: \(error); a start into a broken forms.d will fail")
        }
    }
}
