/// Carrying a session across a restart of the daemon (`HandoverState`).
extension FormSession {
    /// After a handover: the checks that were in flight in the old process (their answers
    /// will never come) as effects to run again, with a fresh deadline for the availability
    /// check. The check ids stay the same, so the engine accepts their answers.
    public mutating func resumeChecks(now: Moment) -> [FormEffect] {
        var effects: [FormEffect] = []
        if var check = pendingCheck {
            check.deadline = now + configuration.checkTimeout
            pendingCheck = check
            effects.append(.startCheck(id: check.id, identity: form.identity(check.value), deadline: check.deadline))
        }
        for check in pendingQuality {
            let field = form.fields[check.field]
            let user = field.qualityUserField.flatMap { form.index(of: $0) }.map { values[$0] } ?? ""
            effects.append(.checkPassword(id: check.id, password: check.value, user: user))
        }
        return effects
    }
}
