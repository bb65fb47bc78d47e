import NIOConcurrencyHelpers
import SignupProtocol

/// The GitHubSignup view model, held by signupd: inputs are field values and submit taps,
/// outputs are each field's validation, whether submit is enabled, whether it runs, and its
/// result — as `AsyncSequence`s (``changes()``, ``validations(of:)``, ``enabledUpdates()``,
/// ``busyUpdates()``, ``results()``), as a value (``state``) and as an `@Observable` model
/// (``SignupFormModel``).
///
/// | RxSwift GitHubSignup | SignupForm |
/// |---|---|
/// | `username`, `password`, `repeatedPassword` | ``set(_:to:)``, ``bind(_:to:)`` |
/// | `loginTaps` | ``submit()``, ``bindSubmits(_:)`` |
/// | `validatedUsername`, … | ``validations(of:)`` |
/// | `signupEnabled` / `signingIn` / `signedIn` | ``enabledUpdates()`` / ``busyUpdates()`` / ``results()`` |
///
/// An answer that arrives after a newer one (by `seq`) is dropped, as `flatMapLatest` drops
/// a superseded request. When the connection drops, the form connects again and resumes the
/// session within the daemon's grace; the caller sees the outputs go on.
public final class SignupForm: Sendable {
    /// The form, as `describe` gave it.
    public let description: FormDescription
    /// The session id.
    public var session: String { box.withLockedValue { $0.state.session } }
    /// The form's state now.
    public var state: FormState { box.withLockedValue { $0.state } }
    /// The connection the form speaks on now (a new one after a resume).
    public var connection: SignupConnection { box.withLockedValue { $0.connection } }

    let path: String
    let configuration: SignupConnection.Configuration
    let box: NIOLockedValueBox<Inner>

    struct Inner {
        var state: FormState
        var connection: SignupConnection
        var resumeSecret: String?
        var subscribers: [Int: Subscriber] = [:]
        var nextToken = 0
        /// Set once the form ends: closed by the caller, ended by signupd, or not resumable.
        var ended: SignupClientError?
        var reconnecting = false
        var waiters: [CheckedContinuation<Result<SignupConnection, SignupClientError>, Never>] = []
        var watcher: Task<Void, Never>?
    }

    /// A reader of changes: false when it could not take one (its buffer is full, or it ended).
    typealias Subscriber = (send: @Sendable (FormChange) -> Bool, finish: @Sendable () -> Void)

    init(description: FormDescription, connection: SignupConnection, path: String, configuration: SignupConnection.Configuration) {
        self.description = description
        self.path = path
        self.configuration = configuration
        box = NIOLockedValueBox(Inner(state: FormState(form: description), connection: connection))
    }

    deinit {
        // Dropped without close(): the connection goes too, and with it the watcher waiting for its end.
        let (connection, watcher) = box.withLockedValue { ($0.connection, $0.watcher) }
        watcher?.cancel()
        connection.shutDown()
    }

    /// Opens `form` on signupd at `path` (by default where signupctl looks), its messages in
    /// `locale`, on a connection of the form's own.
    public static func open(
        _ form: String = "signup", locale: String? = nil, socket path: String = SocketPath.default,
        configuration: SignupConnection.Configuration = SignupConnection.Configuration()
    ) async throws(SignupClientError) -> SignupForm {
        try await SignupConnection.connect(to: path, configuration: configuration) { connection throws(SignupClientError) in
            let forms = try await connection.describe(locale: locale)
            guard let description = forms.first(where: { $0.name == form }) else {
                throw .refused(SignupServerError(code: .known(.unknownForm), message: "signupd offers no form \(form); it offers \(forms.map(\.name).joined(separator: ", "))"))
            }
            let signupForm = SignupForm(description: description, connection: connection, path: path, configuration: configuration)
            signupForm.observe(connection)
            let opened = try await connection.open(form: form, locale: locale)
            signupForm.box.withLockedValue {
                $0.state.session = opened.session
                $0.state.locale = opened.locale
                $0.resumeSecret = opened.resumeSecret
            }
            // The snapshot `open` causes has been applied once this barrier returns.
            try await connection.ping()
            signupForm.watch(connection)
            return signupForm
        }
    }

    /// Joins a live session of the same user, as a monitor does: the outputs follow every
    /// change whoever makes it, and inputs work as for the opener.
    public static func attach(
        session: String, socket path: String = SocketPath.default,
        configuration: SignupConnection.Configuration = SignupConnection.Configuration()
    ) async throws(SignupClientError) -> SignupForm {
        try await SignupConnection.connect(to: path, configuration: configuration) { connection throws(SignupClientError) in
            let forms = try await connection.describe()
            // The snapshot follows `attached` at once: the form must be known before it.
            let relay = AttachRelay()
            connection.observe { relay.pass($0) }
            let handle = try await connection.attach(session: session)
            guard let description = forms.first(where: { $0.name == handle.form }) else { throw .noSession }
            let form = SignupForm(description: description, connection: connection, path: path, configuration: configuration)
            form.box.withLockedValue {
                $0.state.session = handle.session
                $0.state.locale = handle.locale
            }
            relay.deliver(to: form)
            try await connection.ping()
            form.watch(connection)
            return form
        }
    }

    // MARK: Inputs

    /// Sets a field's whole new value (a keystroke's result); its validation comes as an output.
    public func set(_ field: String, to value: String) async throws(SignupClientError) {
        try await onConnection { connection, session throws(SignupClientError) in try await connection.set(field, to: value, session: session) }
    }

    /// Submits (a tap). Returns once signupd took it; its `busy`, `enabled` and `result` come
    /// as outputs. Throws signupd's refusal, e.g. `not_ready` while submit is not enabled.
    public func submit() async throws(SignupClientError) {
        try await onConnection { connection, session throws(SignupClientError) in try await connection.submit(session: session) }
    }

    /// Feeds a field from any sequence of values (a text field's changes) until it ends.
    public func bind<Values: AsyncSequence>(_ field: String, to values: Values) async throws where Values.Element == String {
        for try await value in values { try await set(field, to: value) }
    }

    /// Submits on every tap of a sequence (a button's taps) until it ends. A tap while
    /// submit is not enabled is refused by signupd and skipped, as a disabled button is.
    public func bindSubmits<Taps: AsyncSequence>(_ taps: Taps) async throws {
        for try await _ in taps {
            do {
                try await submit()
            } catch {
                guard case .refused(let refusal) = error, refusal.code == .known(.notReady) else { throw error }
            }
        }
    }

    /// Waits until signupd has handled every input sent so far and its outputs are applied.
    public func settle() async throws(SignupClientError) {
        try await onConnection { connection, _ throws(SignupClientError) in try await connection.ping() }
    }

    /// Asks signupd for the whole state again and returns it once applied.
    public func snapshot() async throws(SignupClientError) -> FormState {
        try await onConnection { connection, session throws(SignupClientError) in
            try await connection.snapshot(session: session)
            try await connection.ping()
        }
        return state
    }

    /// Switches the session's locale: the messages come again in that language.
    public func switchLocale(to locale: String) async throws(SignupClientError) {
        try await onConnection { connection, session throws(SignupClientError) in
            try await connection.switchLocale(to: locale, session: session)
            try await connection.ping()
        }
    }

    /// Ends the form: signupd closes the session (if this form opened it) and the outputs finish.
    public func close() async {
        let (connection, session, watcher) = box.withLockedValue { inner in
            if inner.ended == nil { inner.ended = .ended(.closed) }
            return (inner.connection, inner.state.session, inner.watcher)
        }
        watcher?.cancel()
        try? await connection.closeSession(session)
        await connection.close()
        finish(because: .ended(.closed))
    }

    /// Runs `body` on the current connection; once more on the resumed one if the
    /// connection dropped under it.
    private func onConnection(_ body: (SignupConnection, String) async throws(SignupClientError) -> Void) async throws(SignupClientError) {
        let connection = try await currentConnection()
        let failure: SignupClientError
        do {
            try await body(connection, session)
            return
        } catch {
            failure = error
        }
        guard failure.isDrop else { throw failure }
        let resumed = try await resumedConnection(after: connection)
        try await body(resumed, session)
    }
}

/// Holds the lines that arrive between `attach` and the form that will apply them (the
/// form needs `attached`'s form name first), then passes every line on, in order.
private final class AttachRelay: Sendable {
    private let state = NIOLockedValueBox<(held: [ServerMessage], form: SignupForm?)>(([], nil))

    func pass(_ message: ServerMessage) {
        state.withLockedValue { state in
            if let form = state.form { form.observed(message) } else { state.held.append(message) }
        }
    }

    func deliver(to form: SignupForm) {
        state.withLockedValue { state in
            for message in state.held { form.observed(message) }
            state = ([], form)
        }
    }
}
