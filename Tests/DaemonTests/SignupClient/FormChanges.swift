import SignupClient
import Testing

/// Waits, reading the form's changes (no sleeping), until `condition` holds for its state.
func waitUntil(_ form: SignupForm, _ condition: @escaping @Sendable (FormState) -> Bool) async throws {
    let changes = form.changes()
    if condition(form.state) { return }
    for await _ in changes where condition(form.state) { return }
    Issue.record("the form ended before the condition held: \(form.state)")
}

/// Every change a reader got until the form ended, checking that `seq` strictly increases:
/// nothing repeated, nothing out of order.
func everyChange(_ changes: AsyncStream<FormChange>) async -> [FormChange] {
    var seen: [FormChange] = []
    for await change in changes { seen.append(change) }
    let seqs = seen.compactMap(\.seq)
    #expect(zip(seqs, seqs.dropFirst()).allSatisfy { $0 < $1 }, "seq must strictly increase: \(seqs)")
    return seen
}
