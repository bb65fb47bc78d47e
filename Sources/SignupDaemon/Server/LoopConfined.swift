import NIOCore

/// An object whose mutable state belongs to one event loop.
protocol EventLoopConfined: AnyObject {
    var eventLoop: EventLoop { get }
}

/// A member only its owner's event loop may read or write: every access checks it
/// (release builds too), so the confinement that makes the owner `@unchecked Sendable`
/// is checked, not assumed. For hooks and settings, not per-byte state: the owner's
/// methods check once on entry for those.
@propertyWrapper
struct LoopConfined<Value> {
    private var value: Value

    init(wrappedValue: Value) {
        value = wrappedValue
    }

    static subscript<Owner: EventLoopConfined>(
        _enclosingInstance owner: Owner,
        wrapped wrappedKeyPath: ReferenceWritableKeyPath<Owner, Value>,
        storage storageKeyPath: ReferenceWritableKeyPath<Owner, LoopConfined<Value>>
    ) -> Value {
        get {
            owner.eventLoop.preconditionInEventLoop()
            return owner[keyPath: storageKeyPath].value
        }
        set {
            owner.eventLoop.preconditionInEventLoop()
            owner[keyPath: storageKeyPath].value = newValue
        }
    }

    @available(*, unavailable, message: "only a member of an EventLoopConfined class")
    var wrappedValue: Value {
        get { fatalError("only a member of an EventLoopConfined class") }
        set { fatalError("only a member of an EventLoopConfined class") }
    }
}
