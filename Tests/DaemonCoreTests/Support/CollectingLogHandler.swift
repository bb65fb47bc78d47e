import Logging
import NIOConcurrencyHelpers

/// A swift-log handler that keeps every line it is given, for the test to read.
struct CollectingLogHandler: LogHandler {
    struct Line: Sendable {
        var level: Logger.Level
        var message: String
        var metadata: Logger.Metadata
    }

    let lines: NIOLockedValueBox<[Line]>
    var logLevel: Logger.Level
    var metadata: Logger.Metadata = [:]

    init(lines: NIOLockedValueBox<[Line]>, logLevel: Logger.Level) {
        self.lines = lines
        self.logLevel = logLevel
    }

    func log(event: LogEvent) {
        var merged = metadata
        merged.merge(event.metadata ?? [:]) { _, new in new }
        let line = Line(level: event.level, message: event.message.description, metadata: merged)
        lines.withLockedValue { $0.append(line) }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }
}
