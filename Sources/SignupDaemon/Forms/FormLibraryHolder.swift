import FormEngine
import NIOConcurrencyHelpers

/// The library new sessions are opened with. A reload (SIGHUP) swaps it; sessions keep
/// the definition they were opened with.
final class FormLibraryHolder: Sendable {
    private let current: NIOLockedValueBox<FormLibrary>

    init(_ library: FormLibrary) {
        current = NIOLockedValueBox(library)
    }

    var library: FormLibrary { current.withLockedValue { $0 } }

    func replace(with library: FormLibrary) {
        current.withLockedValue { $0 = library }
    }
}
