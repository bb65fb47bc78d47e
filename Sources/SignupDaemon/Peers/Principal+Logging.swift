import Logging

extension Principal {
    /// Log metadata naming who: uid, a front end's client and address, and the pid when
    /// known — in the journal's structured fields and its plain text alike.
    func logMetadata(pid: Int32? = nil, _ more: [String: String] = [:]) -> Logger.Metadata {
        var fields = Logger.Metadata()
        for (key, value) in metadata.merging(more, uniquingKeysWith: { first, _ in first }) { fields[key] = .string(value) }
        if let pid { fields["pid"] = "\(pid)" }
        return fields
    }
}
