import SignupProtocol

extension FormFile {
    static func isMessageIDForCatalogue(_ word: String) -> Bool { Parser.isMessageID(word) }

    /// Why `id` cannot be a rule's failure message, or nil when it can: success and
    /// progress ids (`*.valid`, `*.done`, `*.checking`…) and the ids of results.
    static func notAFailure(_ id: String) -> String? {
        let last = id.split(separator: ".").last.map(String.init) ?? id
        let first = id.split(separator: ".").first.map(String.init) ?? id
        if ["valid", "ok", "done", "checking", "available", "acceptable", "entered"].contains(last) || ["password.repeated", "password.match"].contains(id) {
            return "\"\(last)\" ids say a value is good or being checked"
        }
        if ["taken", "too_similar", "invalid_credentials", "rate_limited", "unavailable", "unreachable"].contains(last)
            || ["signup", "login", "store", "availability"].contains(first)
        {
            return "it is the message of a submit or availability result"
        }
        return nil
    }
}
