/// The two text formats a scrape may get: Prometheus' (0.0.4, the default) and OpenMetrics
/// 1.0.0 when the `Accept` header asks for it, as Prometheus 2.x does by default.
enum Exposition {
    static let prometheusContentType = "text/plain; version=0.0.4; charset=utf-8"
    static let openMetricsContentType = "application/openmetrics-text; version=1.0.0; charset=utf-8"

    /// Whether `Accept` names OpenMetrics (with a non-zero quality).
    static func wantsOpenMetrics(accept: [String]) -> Bool {
        for value in accept {
            for item in value.split(separator: ",") {
                // Media types and parameter names are case-insensitive (RFC 9110).
                let parts = item.split(separator: ";").map { $0.trimmingCharacters(in: " \t").lowercased() }
                guard parts.first == "application/openmetrics-text" else { continue }
                let quality = parts.dropFirst().first { $0.hasPrefix("q=") }.flatMap { Double($0.dropFirst(2)) } ?? 1
                if quality > 0 { return true }
            }
        }
        return false
    }

    /// Prometheus text as OpenMetrics: a counter family is named without `_total` in its
    /// `# TYPE` and `# HELP` lines (its samples keep it), and the exposition ends in `# EOF`.
    static func openMetrics(fromPrometheus text: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(text.count + 8)
        let lines = text.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true)
        // Counter families: their `# TYPE name counter` lines.
        var counters = Set<Substring>()
        for line in lines where line.starts(with: "# TYPE ".utf8) {
            let words = String(decoding: line, as: UTF8.self).split(separator: " ")
            if words.count == 4, words[3] == "counter" { counters.insert(words[2]) }
        }
        for line in lines {
            let text = String(decoding: line, as: UTF8.self)
            if text.hasPrefix("# TYPE ") || text.hasPrefix("# HELP ") {
                let words = text.split(separator: " ", maxSplits: 3, omittingEmptySubsequences: false)
                if words.count >= 3, counters.contains(words[2]), words[2].hasSuffix("_total") {
                    var renamed = words
                    renamed[2] = words[2].dropLast("_total".count)
                    out.append(contentsOf: renamed.joined(separator: " ").utf8)
                    out.append(UInt8(ascii: "\n"))
                    continue
                }
            }
            out.append(contentsOf: line)
            out.append(UInt8(ascii: "\n"))
        }
        out.append(contentsOf: "# EOF\n".utf8)
        return out
    }
}

extension StringProtocol {
    fileprivate func trimmingCharacters(in set: String) -> String {
        let scalars = Set(set.unicodeScalars)
        var view = Substring(self)
        while let first = view.unicodeScalars.first, scalars.contains(first) { view = view.dropFirst() }
        while let last = view.unicodeScalars.last, scalars.contains(last) { view = view.dropLast() }
        return String(view)
    }
}
