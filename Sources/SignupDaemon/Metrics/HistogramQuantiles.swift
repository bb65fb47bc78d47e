/// p50 and p99 of a histogram as the registry renders it (its `_bucket` lines, every label
/// set merged), interpolated within a bucket as PromQL's `histogram_quantile` does. For
/// `status`: the figures since the process started, from the same counts a scrape reads.
struct HistogramQuantiles: Sendable, Equatable {
    var count: Int
    /// Seconds; nil when nothing was observed.
    var p50: Double?
    var p99: Double?

    init(metric: String, in exposition: [UInt8]) {
        var cumulative: [Double: Double] = [:]
        let prefix = Array("\(metric)_bucket{".utf8)
        for line in exposition.split(separator: UInt8(ascii: "\n")) where line.starts(with: prefix) {
            let text = String(decoding: line, as: UTF8.self)
            guard let leStart = text.range(of: "le=\""), let leEnd = text[leStart.upperBound...].firstIndex(of: "\""),
                let space = text.lastIndex(of: " "), let value = Double(text[text.index(after: space)...])
            else { continue }
            let bound = String(text[leStart.upperBound..<leEnd])
            let le = bound == "+Inf" ? Double.infinity : (Double(bound) ?? .infinity)
            cumulative[le, default: 0] += value
        }
        let buckets = cumulative.sorted { $0.key < $1.key }
        count = Int(buckets.last?.value ?? 0)
        p50 = Self.quantile(0.5, buckets)
        p99 = Self.quantile(0.99, buckets)
    }

    private static func quantile(_ q: Double, _ buckets: [(key: Double, value: Double)]) -> Double? {
        guard let total = buckets.last?.value, total > 0 else { return nil }
        let rank = q * total
        var lower = 0.0
        var below = 0.0
        for (bound, count) in buckets {
            if count >= rank {
                // The highest finite bound for a rank in the +Inf bucket.
                guard bound.isFinite else { return lower }
                let inBucket = count - below
                return inBucket > 0 ? lower + (bound - lower) * (rank - below) / inBucket : bound
            }
            if bound.isFinite { lower = bound }
            below = count
        }
        return lower
    }
}
