import SignupProtocol

/// The e-mail rule: one `@`, a local part, a domain of dot-separated labels.
public enum EmailAddresses {
    public static func isValid(_ value: String) -> Bool {
        guard value.utf8.count <= 254 else { return false }
        let parts = value.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, parts[0].utf8.count <= 64 else { return false }
        guard !value.unicodeScalars.contains(where: { $0.properties.isWhitespace || $0.value < 0x20 }) else { return false }
        let labels = parts[1].split(separator: ".", omittingEmptySubsequences: false)
        return labels.count >= 2 && labels.allSatisfy { !$0.isEmpty }
    }
}
