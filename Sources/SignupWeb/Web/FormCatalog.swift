import NIOConcurrencyHelpers
import NIOCore
import SignupClient
import SignupProtocol

/// signupd's forms as `describe` gives them, per locale, kept for a few seconds: every page
/// is drawn from them, and a reload of signupd's forms shows within that time.
final class FormCatalog: Sendable {
    private let cache = NIOLockedValueBox([String: (forms: [FormDescription], fetched: NIODeadline)]())
    let socketPath: String
    let freshness: TimeAmount

    init(socketPath: String, freshness: TimeAmount = .seconds(10)) {
        self.socketPath = socketPath
        self.freshness = freshness
    }

    func forms(locale: String) async throws(SignupClientError) -> [FormDescription] {
        let now = NIODeadline.now()
        if let cached = cache.withLockedValue({ $0[locale] }), now - cached.fetched < freshness { return cached.forms }
        let connection = try await SignupConnection.connect(to: socketPath)
        defer { Task { await connection.close() } }
        let forms = try await connection.describe(locale: locale)
        cache.withLockedValue { $0[locale] = (forms, now) }
        return forms
    }
}
