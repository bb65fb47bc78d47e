import FormEngine
import NIOConcurrencyHelpers

/// The library new sessions are opened with. A reload (SIGHUP) swaps it; sessions keep
/// the definition they were opened with.
final class FormLibraryHolder: Sendable {
    private let current: NIOLockedValueBox<(library: FormLibrary, fallback: FormFallback?)>

    init(_ library: FormLibrary, fallback: FormFallback? = nil) {
        current = NIOLockedValueBox((library, fallback))
    }

    var library: FormLibrary { current.withLockedValue { $0.library } }

    /// Why new sessions get the last good configuration rather than forms.d's; nil when
    /// they get forms.d's.
    var fallback: FormFallback? { current.withLockedValue { $0.fallback } }

    /// A library loaded from the directories: any fallback is over.
    func replace(with library: FormLibrary) {
        current.withLockedValue { $0 = (library, nil) }
    }
}

/// A start that could not load forms.d and serves the last good configuration instead.
struct FormFallback: Sendable, Equatable {
    /// How many errors forms.d and messages.d have, and the first (file:line:column: text).
    var errorCount: Int
    var firstError: String
    /// When the configuration served was saved (Unix seconds).
    var savedAt: Int64

    /// For `status`, the journal and systemd's status line.
    var summary: String {
        "forms.d/messages.d have \(errorCount) error\(errorCount == 1 ? "" : "s") (the first: \(firstError)); serving the last configuration that loaded"
    }
}
