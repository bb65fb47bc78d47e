import FormEngine
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOEmbedded
import Prometheus
import Testing
@testable import SignupDaemonCore

// Issue 26 (operators): the pure parts behind logs, metrics, status and --metrics-listen.

/// A `LogSummary` writing into lines the test reads, and the metrics it counts into.
private struct SummaryHarness {
    let lines = NIOLockedValueBox<[CollectingLogHandler.Line]>([])
    let metrics = DaemonMetrics(version: "test")
    let summary: LogSummary

    init(level: Logger.Level = .info, window: TimeAmount = .seconds(60), firstLines: Int = 3) {
        let lines = self.lines
        let logger = Logger(label: "signupd-operators-test") { _ in CollectingLogHandler(lines: lines, logLevel: level) }
        summary = LogSummary(logger: logger, metrics: metrics, window: window, firstLines: firstLines)
    }

    var logged: [CollectingLogHandler.Line] { lines.withLockedValue { $0 } }
    var messages: [String] { logged.map(\.message) }
}

/// One sample line of a Prometheus exposition: `name{a="b",c="d"} value`.
private struct Sample: Equatable {
    var name: String
    var labels: [String: String]
    var value: String

    /// Every sample (not comment) line of `text`.
    static func all(in text: String) -> [Sample] {
        text.split(separator: "\n").compactMap { line in
            guard !line.hasPrefix("#"), let space = line.lastIndex(of: " ") else { return nil }
            let series = line[..<space]
            let value = String(line[line.index(after: space)...])
            guard let open = series.firstIndex(of: "{") else { return Sample(name: String(series), labels: [:], value: value) }
            let name = String(series[..<open])
            let inner = series[series.index(after: open)..<(series.lastIndex(of: "}") ?? series.endIndex)]
            var labels: [String: String] = [:]
            for pair in inner.split(separator: ",") {
                let parts = pair.split(separator: "=", maxSplits: 1)
                guard parts.count == 2 else { continue }
                labels[String(parts[0])] = String(parts[1].dropFirst().dropLast())
            }
            return Sample(name: name, labels: labels, value: value)
        }
    }
}

extension DaemonMetrics {
    fileprivate var text: String { String(decoding: exposition(), as: UTF8.self) }

    fileprivate func samples(named name: String) -> [Sample] {
        Sample.all(in: text).filter { $0.name == name }
    }
}

// MARK: LogSummary

@Suite("LogSummary: repeated events per peer are counted, then summarised")
struct LogSummaryTests {
    /// A fixed point of virtual time, far from zero.
    static let t0 = NIODeadline.uptimeNanoseconds(5_000_000_000_000)
    static let alice: Logger.Metadata = ["uid": "1000", "pid": "4242"]

    @Test("the first 3 of an event from one peer are logged, the rest only counted, and one line after the window says how many")
    func firstThreeThenASummary() {
        let harness = SummaryHarness()
        let left = 7
        for i in 0..<(3 + left) {
            harness.summary.log(.warning, "refused: too many connections", peer: 1000, metadata: Self.alice, now: Self.t0 + .seconds(Int64(i)))
        }
        #expect(harness.messages == Array(repeating: "refused: too many connections", count: 3))
        #expect(harness.logged.allSatisfy { $0.level == .warning && $0.metadata["uid"] == "1000" })

        // Within the window nothing more is said.
        harness.summary.flush(now: Self.t0 + .seconds(59))
        #expect(harness.logged.count == 3)

        harness.summary.flush(now: Self.t0 + .seconds(60))
        let after = harness.logged
        #expect(after.count == 4)
        let summary = after[3]
        #expect(summary.message.contains("\(left) more like it not logged separately"))
        #expect(summary.message.hasPrefix("refused: too many connections"))
        #expect(summary.level == .warning)
        #expect(summary.metadata["repeated"] == "\(left)")
        #expect(summary.metadata["within_seconds"] == "60")
        #expect(summary.metadata["uid"] == "1000")
        #expect(summary.metadata["pid"] == "4242")

        // The window's tally is gone: a second flush says nothing more.
        harness.summary.flush(now: Self.t0 + .seconds(600))
        #expect(harness.logged.count == 4)
    }

    @Test("the summarised lines are counted in signupd_log_lines_summarised_total")
    func summarisedLinesAreCounted() throws {
        let harness = SummaryHarness()
        for _ in 0..<5 { harness.summary.log(.notice, "dropped", peer: 1000, metadata: Self.alice, now: Self.t0) }
        for _ in 0..<6 { harness.summary.log(.notice, "dropped", peer: 2000, metadata: ["uid": "2000"], now: Self.t0) }
        // 2 left out for uid 1000, 3 for uid 2000.
        let samples = harness.metrics.samples(named: DaemonMetrics.Name.logLinesSummarised)
        #expect(samples.count == 1)
        let value = try #require(samples.first.flatMap { Double($0.value) })
        #expect(value == 5)
        #expect(harness.logged.count == 6)
    }

    @Test("nothing is counted in the metric while every line is logged")
    func noMetricWhenNothingLeftOut() {
        let harness = SummaryHarness()
        for _ in 0..<3 { harness.summary.log(.notice, "dropped", peer: 1000, metadata: Self.alice, now: Self.t0) }
        #expect(harness.logged.count == 3)
        let value = harness.metrics.samples(named: DaemonMetrics.Name.logLinesSummarised).first.flatMap { Double($0.value) } ?? 0
        #expect(value == 0)
    }

    @Test("two peers are tallied separately, and each summary names its own peer")
    func peersAreSeparate() {
        let harness = SummaryHarness()
        let bob: Logger.Metadata = ["uid": "1001", "pid": "7"]
        for _ in 0..<5 { harness.summary.log(.warning, "throttled", peer: 1000, metadata: Self.alice, now: Self.t0) }
        for _ in 0..<4 { harness.summary.log(.warning, "throttled", peer: 1001, metadata: bob, now: Self.t0) }
        // 3 of each were logged.
        #expect(harness.logged.filter { $0.metadata["uid"] == "1000" }.count == 3)
        #expect(harness.logged.filter { $0.metadata["uid"] == "1001" }.count == 3)

        harness.summary.flush(now: Self.t0 + .seconds(61))
        let summaries = harness.logged.dropFirst(6)
        #expect(summaries.count == 2)
        let aliceSummary = summaries.first { $0.metadata["uid"] == "1000" }
        let bobSummary = summaries.first { $0.metadata["uid"] == "1001" }
        #expect(aliceSummary?.metadata["repeated"] == "2")
        #expect(aliceSummary?.message.contains("2 more like it not logged separately") == true)
        #expect(bobSummary?.metadata["repeated"] == "1")
        #expect(bobSummary?.metadata["pid"] == "7")
        #expect(bobSummary?.message.contains("1 more like it not logged separately") == true)
    }

    @Test("failed logins at each existing account are their own kind, and a summary names the accounts: guesses at vic cannot hide among failures at dummies")
    func summariesNameTheAccounts() {
        let harness = SummaryHarness()
        let names = ["mdum1", "mdum2", "mdum3", "vic", "vic", "vic", "vic", "vic", "mdum4"]
        for (i, name) in names.enumerated() {
            harness.summary.log(.notice, "login failed", peer: 1004, metadata: ["uid": "1004", "user": "\(name)"], now: Self.t0 + .seconds(Int64(i)))
        }
        harness.summary.flush(now: Self.t0 + .seconds(70))
        // Each existing account's failures are their own kind: all of them logged here (three
        // or fewer each), vic's included, however many dummies came first.
        #expect(harness.logged.filter { $0.metadata["user"] == "vic" }.count == 3)
        #expect(harness.logged.contains { $0.metadata["user"] == .array([.string("vic")]) && $0.metadata["repeated"] == "2" })
        let forty = SummaryHarness()
        for i in 0..<40 { forty.summary.log(.notice, "login failed", peer: 1004, metadata: ["user": "kx\(i)"], now: Self.t0) }
        for _ in 0..<5 { forty.summary.log(.notice, "login failed", peer: 1004, metadata: ["user": "vic"], now: Self.t0) }
        #expect(forty.logged.filter { $0.metadata["user"] == "vic" }.count == 3)
        forty.summary.flush(now: Self.t0 + .seconds(61))
        #expect(forty.logged.last { $0.metadata["repeated"] != nil }?.metadata["user"] == .array([.string("vic")]))
        // Past `maxNamed` accounts they are counted, so a summary stays one bounded line.
        let many = SummaryHarness(firstLines: 0)
        for i in 0..<(LogSummary.maxNamed + 5) {
            many.summary.log(.notice, "login failed (no such account)", peer: 1004, metadata: ["name": "zq\(i)"], now: Self.t0)
        }
        many.summary.flush(now: Self.t0 + .seconds(61))
        if case .array(let listed) = many.logged.last?.metadata["name"] { #expect(listed.count == LogSummary.maxNamed) } else { Issue.record("no list of names") }
        #expect(many.logged.last?.metadata["name_not_named"] == "5")
    }

    @Test("two events of one peer are tallied separately")
    func eventsAreSeparate() {
        let harness = SummaryHarness()
        for _ in 0..<4 { harness.summary.log(.warning, "refused", peer: 1000, metadata: Self.alice, now: Self.t0) }
        for _ in 0..<3 { harness.summary.log(.warning, "throttled", peer: 1000, metadata: Self.alice, now: Self.t0) }
        #expect(harness.messages == ["refused", "refused", "refused", "throttled", "throttled", "throttled"])
        harness.summary.flush(now: Self.t0 + .seconds(60))
        #expect(harness.messages.count == 7)
        #expect(harness.messages.last?.hasPrefix("refused: 1 more like it") == true)
    }

    @Test("events below the logger's level are neither logged nor counted")
    func belowTheLevel() {
        let harness = SummaryHarness(level: .notice)
        for _ in 0..<10 { harness.summary.log(.info, "quiet", peer: 1000, metadata: Self.alice, now: Self.t0) }
        #expect(harness.logged.isEmpty)
        // Had they been counted, these would be left out.
        for _ in 0..<3 { harness.summary.log(.notice, "quiet", peer: 1000, metadata: Self.alice, now: Self.t0) }
        #expect(harness.messages == ["quiet", "quiet", "quiet"])
        harness.summary.flush(now: Self.t0 + .seconds(60))
        #expect(harness.logged.count == 3)
        let value = harness.metrics.samples(named: DaemonMetrics.Name.logLinesSummarised).first.flatMap { Double($0.value) } ?? 0
        #expect(value == 0)
    }

    @Test("the peer's next event after the window says what the last window left out, and starts a new one")
    func theNextEventSummarises() {
        let harness = SummaryHarness()
        for _ in 0..<5 { harness.summary.log(.warning, "refused", peer: 1000, metadata: Self.alice, now: Self.t0) }
        #expect(harness.logged.count == 3)
        harness.summary.log(.warning, "refused", peer: 1000, metadata: Self.alice, now: Self.t0 + .seconds(90))
        let messages = harness.messages
        #expect(messages.count == 5)
        #expect(messages[3].contains("2 more like it not logged separately"))
        // And the new window's first event is logged as it comes.
        #expect(messages[4] == "refused")
    }

    @Test("past maxTallies peers, a new peer is tallied under the shared (many peers) key")
    func manyPeersShareOneTally() {
        let harness = SummaryHarness()
        // Fill the table: one event each, all logged.
        for uid in 0..<UInt32(LogSummary.maxTallies) {
            harness.summary.log(.warning, "refused", peer: PeerKey(uid: 100_000 + uid), metadata: ["uid": "\(100_000 + uid)"], now: Self.t0)
        }
        #expect(harness.logged.count == LogSummary.maxTallies)
        // Four new peers, one event each: were they tallied apart, all four would be logged.
        for uid in UInt32(1)...4 {
            harness.summary.log(.warning, "refused", peer: PeerKey(uid: uid), metadata: ["uid": "\(uid)"], now: Self.t0)
        }
        #expect(harness.logged.count == LogSummary.maxTallies + 3)
        // A peer tallied before the table filled still has its own tally.
        harness.summary.log(.warning, "refused", peer: PeerKey(uid: 100_000), metadata: ["uid": "100000"], now: Self.t0)
        #expect(harness.logged.count == LogSummary.maxTallies + 4)

        harness.summary.flush(now: Self.t0 + .seconds(60))
        let summaries = harness.logged.dropFirst(LogSummary.maxTallies + 4)
        #expect(summaries.count == 1)
        let summary = summaries.first
        #expect(summary?.message.contains("from many peers") == true)
        #expect(summary?.message.contains("1 more like it not logged separately") == true)
        #expect(summary?.metadata["repeated"] == "1")
        // It names the newest peer it left out.
        #expect(summary?.metadata["uid"] == "4")
    }
}

// MARK: Exposition

@Suite("Exposition: OpenMetrics when asked, Prometheus text otherwise")
struct ExpositionTests {
    @Test("Accept headers", arguments: [
        ("application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1", true),
        ("application/openmetrics-text; version=1.0.0; charset=utf-8", true),
        ("text/plain;version=0.0.4;q=0.5, application/openmetrics-text;version=1.0.0;q=0.9", true),
        ("application/openmetrics-text;q=0.001", true),
        ("text/plain", false),
        ("text/plain;version=0.0.4;q=0.5,*/*;q=0.1", false),
        ("application/openmetrics-text;q=0", false),
        ("application/openmetrics-text; version=1.0.0; q=0.0", false),
        ("application/json", false),
        ("*/*", false),
        ("", false),
    ])
    func accept(_ header: String, _ wanted: Bool) {
        #expect(Exposition.wantsOpenMetrics(accept: [header]) == wanted)
    }

    @Test("several Accept headers are read together; none is Prometheus text")
    func severalHeaders() {
        #expect(Exposition.wantsOpenMetrics(accept: ["text/plain", "application/openmetrics-text"]))
        #expect(!Exposition.wantsOpenMetrics(accept: ["text/plain", "application/openmetrics-text;q=0"]))
        #expect(!Exposition.wantsOpenMetrics(accept: []))
        // Media types and parameters are case-insensitive.
        #expect(Exposition.wantsOpenMetrics(accept: ["APPLICATION/OpenMetrics-Text; Version=1.0.0"]))
        #expect(!Exposition.wantsOpenMetrics(accept: ["application/openmetrics-text; Q=0"]))
    }

    @Test("a counter family's TYPE and HELP drop _total, its samples keep it; gauges and histograms are unchanged; # EOF ends it")
    func openMetricsText() {
        let prometheus = """
            # HELP x_total Things  done, with two spaces.
            # TYPE x_total counter
            x_total{a="b"} 3
            x_total{a="c"} 4
            # HELP requests Counted without the suffix.
            # TYPE requests counter
            requests 2
            # HELP g_total A gauge whose name ends in _total.
            # TYPE g_total gauge
            g_total 1
            # TYPE h_seconds histogram
            h_seconds_bucket{le="0.1"} 1
            h_seconds_bucket{le="+Inf"} 2
            h_seconds_sum 0.35
            h_seconds_count 2

            """
        let expected = """
            # HELP x Things  done, with two spaces.
            # TYPE x counter
            x_total{a="b"} 3
            x_total{a="c"} 4
            # HELP requests Counted without the suffix.
            # TYPE requests counter
            requests 2
            # HELP g_total A gauge whose name ends in _total.
            # TYPE g_total gauge
            g_total 1
            # TYPE h_seconds histogram
            h_seconds_bucket{le="0.1"} 1
            h_seconds_bucket{le="+Inf"} 2
            h_seconds_sum 0.35
            h_seconds_count 2
            # EOF

            """
        let out = String(decoding: Exposition.openMetrics(fromPrometheus: Array(prometheus.utf8)), as: UTF8.self)
        #expect(out == expected)
    }

    @Test("empty Prometheus text is just # EOF")
    func emptyText() {
        #expect(String(decoding: Exposition.openMetrics(fromPrometheus: []), as: UTF8.self) == "# EOF\n")
    }

    @Test("the daemon's own registry, as OpenMetrics: counters renamed, samples kept, one # EOF at the end")
    func theDaemonsRegistry() {
        let metrics = DaemonMetrics(version: "1.2.3")
        metrics.submitted(.signup, form: "signup", outcome: .signedUp(user: "alice"))
        metrics.hashed(nanoseconds: 30_000_000)
        let out = String(decoding: Exposition.openMetrics(fromPrometheus: metrics.exposition()), as: UTF8.self)
        let lines = out.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(out.hasSuffix("\n# EOF\n"))
        #expect(lines.filter { $0 == "# EOF" }.count == 1)
        #expect(lines.contains("# TYPE signupd_signups counter"))
        #expect(!lines.contains("# TYPE signupd_signups_total counter"))
        #expect(lines.contains { $0.hasPrefix("# HELP signupd_signups Signups ended") })
        #expect(lines.contains { $0.hasPrefix("signupd_signups_total{") })
        #expect(lines.contains("# TYPE signupd_hash_seconds histogram"))
        #expect(lines.contains("# TYPE signupd_up gauge"))
        #expect(lines.contains("signupd_up 1") || lines.contains("signupd_up 1.0"))
    }

    @Test("every store operation's histogram is there at zero once the series are made (helper-46: they came with the first call)")
    func storeSecondsAtZero() {
        let metrics = DaemonMetrics(version: "1.2.3")
        metrics.prepare(forms: [])
        let lines = String(decoding: metrics.exposition(), as: UTF8.self).split(separator: "\n").map(String.init)
        for operation in ["availability", "create_account", "account", "update_password_hash", "store_token", "token_owner", "revoke_token", "delete_expired_tokens"] {
            #expect(lines.contains { $0.hasPrefix("signupd_store_seconds_count{") && $0.contains("operation=\"\(operation)\"") && $0.hasSuffix(" 0") }, "\(operation)")
        }
    }
}

// MARK: HistogramQuantiles

@Suite("HistogramQuantiles: count, p50 and p99 from the emitted buckets")
struct HistogramQuantilesTests {
    /// Bucket bounds of `metric` in seconds, as the registry is given them.
    static func bounds(_ metric: String) -> [Double] {
        DaemonMetrics.buckets(metric).map { duration in
            let (seconds, attoseconds) = duration.components
            return Double(seconds) + Double(attoseconds) / 1e18
        }
    }

    /// The (lower, upper] bucket that holds `seconds`.
    static func bucket(holding seconds: Double, _ metric: String) -> (lower: Double, upper: Double) {
        let bounds = bounds(metric)
        guard let index = bounds.firstIndex(where: { seconds <= $0 }) else { return (bounds.last ?? 0, .infinity) }
        return (index == 0 ? 0 : bounds[index - 1], bounds[index])
    }

    static func within(_ value: Double?, _ bucket: (lower: Double, upper: Double)) -> Bool {
        guard let value else { return false }
        return value > bucket.lower && value <= bucket.upper
    }

    @Test("p50 and p99 of hash times fall in the buckets that hold the 50th and 99th observations")
    func hashQuantiles() throws {
        let metrics = DaemonMetrics(version: "test")
        // 60 hashes of 30 ms, 40 of 700 ms: the median is 30 ms, the 99th one 700 ms.
        for _ in 0..<60 { metrics.hashed(nanoseconds: 30_000_000) }
        for _ in 0..<40 { metrics.hashed(nanoseconds: 700_000_000) }
        let quantiles = HistogramQuantiles(metric: DaemonMetrics.Name.hashSeconds, in: metrics.exposition())
        #expect(quantiles.count == 100)
        let median = Self.bucket(holding: 0.030, DaemonMetrics.Name.hashSeconds)
        let high = Self.bucket(holding: 0.700, DaemonMetrics.Name.hashSeconds)
        #expect(median.lower == 0.025 && median.upper == 0.05)
        #expect(high.lower == 0.5 && high.upper == 1)
        #expect(Self.within(quantiles.p50, median), "p50 \(String(describing: quantiles.p50)) not in \(median)")
        #expect(Self.within(quantiles.p99, high), "p99 \(String(describing: quantiles.p99)) not in \(high)")
        // Interpolated within the bucket as histogram_quantile does: rank 50 of the 60 in (0.025, 0.05].
        let p50 = try #require(quantiles.p50)
        #expect(abs(p50 - (0.025 + 0.025 * 50 / 60)) < 1e-9)
        // Rank 99: 39 of the 40 in (0.5, 1].
        let p99 = try #require(quantiles.p99)
        #expect(abs(p99 - (0.5 + 0.5 * 39 / 40)) < 1e-9)
    }

    @Test("all observations in one bucket: both quantiles in it")
    func oneBucket() {
        let metrics = DaemonMetrics(version: "test")
        for _ in 0..<10 { metrics.hashed(nanoseconds: 3_000_000_000) }
        let quantiles = HistogramQuantiles(metric: DaemonMetrics.Name.hashSeconds, in: metrics.exposition())
        let bucket = Self.bucket(holding: 3, DaemonMetrics.Name.hashSeconds)
        #expect(bucket.lower == 2.5 && bucket.upper == 5)
        #expect(quantiles.count == 10)
        #expect(Self.within(quantiles.p50, bucket))
        #expect(Self.within(quantiles.p99, bucket))
    }

    @Test("a rank past the last finite bucket reads as its bound")
    func pastTheLastBucket() {
        let metrics = DaemonMetrics(version: "test")
        metrics.hashed(nanoseconds: 20_000_000_000)
        let quantiles = HistogramQuantiles(metric: DaemonMetrics.Name.hashSeconds, in: metrics.exposition())
        #expect(quantiles.count == 1)
        #expect(quantiles.p50 == Self.bounds(DaemonMetrics.Name.hashSeconds).last)
        #expect(quantiles.p99 == Self.bounds(DaemonMetrics.Name.hashSeconds).last)
    }

    @Test("every label set is merged: validation times of two forms")
    func labelSetsMerged() {
        let metrics = DaemonMetrics(version: "test")
        // Two event loops' shards of each form, added up.
        let loops = [EmbeddedEventLoop(), EmbeddedEventLoop()]
        for _ in 0..<3 { metrics.validation(form: "signup", on: loops[0]).recordNanoseconds(30_000) }
        for index in 0..<5 { metrics.validation(form: "login", on: loops[index % 2]).recordNanoseconds(30_000) }
        metrics.validation(form: "login", on: loops[1]).recordNanoseconds(1_500_000_000)
        let quantiles = HistogramQuantiles(metric: DaemonMetrics.Name.validation, in: metrics.exposition())
        #expect(quantiles.count == 9)
        #expect(Self.within(quantiles.p50, Self.bucket(holding: 0.000_030, DaemonMetrics.Name.validation)))
        // The 9th of 9 (1.5 s) is past 1 s, the last finite bound: p99 reads as it.
        #expect(quantiles.p99 == Self.bounds(DaemonMetrics.Name.validation).last)
    }

    /// `signupd_validation_seconds` is kept per event loop, outside the registry (issue 29):
    /// what it renders is what the registry renders for the same observations.
    @Test("the per-loop histogram renders as the registry's histogram of the same observations", arguments: [
        ([], "signup"), ([0], "signup"), ([1, 25_000, 25_001, 99_999, 100_000, 30_000_000, 99_999_999, 100_000_000, 100_000_001, 7_000_000_000], "signup"),
        ([30_000], "a \"quoted\" \\ label\nvalue"),
    ] as [([Int64], String)])
    func perLoopAsRegistry(_ observations: [Int64], _ label: String) {
        let buckets = DaemonMetrics.buckets(DaemonMetrics.Name.validation)
        let histogram = LoopHistogram(name: "h_seconds", help: "Help text.", labelName: "form", buckets: buckets)
        let loops = [EmbeddedEventLoop(), EmbeddedEventLoop(), EmbeddedEventLoop()]
        histogram.prepare(label)
        for (index, nanoseconds) in observations.enumerated() { histogram.shard(label, on: loops[index % 3]).recordNanoseconds(nanoseconds) }
        var ours: [UInt8] = []
        histogram.emit(into: &ours)
        let registry = PrometheusCollectorRegistry()
        let reference = registry.makeDurationHistogram(
            descriptor: MetricNameDescriptor(metricName: "h_seconds", unitName: "", helpText: "Help text."), labels: [("form", label)], buckets: buckets
        )
        for nanoseconds in observations { reference.recordNanoseconds(nanoseconds) }
        #expect(String(decoding: ours, as: UTF8.self) == String(decoding: registry.emitToBuffer(), as: UTF8.self))
    }

    @Test("nothing observed: count 0, no p50 or p99")
    func nothingObserved() {
        let metrics = DaemonMetrics(version: "test")
        let quantiles = HistogramQuantiles(metric: DaemonMetrics.Name.hashSeconds, in: metrics.exposition())
        #expect(quantiles.count == 0)
        #expect(quantiles.p50 == nil)
        #expect(quantiles.p99 == nil)
        // A histogram with series but none observed yet is the same.
        _ = metrics.validation(form: "signup", on: EmbeddedEventLoop())
        let empty = HistogramQuantiles(metric: DaemonMetrics.Name.validation, in: metrics.exposition())
        #expect(empty.count == 0)
        #expect(empty.p50 == nil)
    }
}

// MARK: RecentActivity

@Suite("RecentActivity: signups and logins of the last 1, 5 and 15 minutes")
struct RecentActivityTests {
    /// A virtual monotonic clock, in nanoseconds.
    final class Clock: Sendable {
        private let nanoseconds: NIOLockedValueBox<UInt64>
        init(_ start: UInt64) { nanoseconds = NIOLockedValueBox(start) }
        var now: UInt64 { nanoseconds.withLockedValue { $0 } }
        func set(_ value: UInt64) { nanoseconds.withLockedValue { $0 = value } }
    }

    static let second: UInt64 = 1_000_000_000
    static let minute = 60 * second
    /// A start on a slot's boundary (slots are 15 s), far from zero.
    static let start = 1000 * minute

    static func activity(_ clock: Clock) -> RecentActivity {
        RecentActivity(now: { clock.now })
    }

    @Test("one signup moves from the last minute to the last 5, to the last 15, and then is gone", arguments: [
        // Seconds after it, then how many the last 1, 5 and 15 minutes count.
        (0, 1, 1, 1),
        (30, 1, 1, 1),
        (3 * 60, 0, 1, 1),
        (10 * 60, 0, 0, 1),
        (14 * 60 + 59, 0, 0, 1),
        (15 * 60, 0, 0, 0),
        (16 * 60, 0, 0, 0),
    ])
    func ages(_ after: Int, _ last1: Int, _ last5: Int, _ last15: Int) {
        let clock = Clock(Self.start)
        let activity = Self.activity(clock)
        activity.submitted(.signup, outcome: .signedUp(user: "alice"), peer: 1000)
        clock.set(Self.start + UInt64(after) * Self.second)
        let rates = activity.rates()
        if last15 == 0 {
            #expect(rates.isEmpty)
        } else {
            #expect(rates == [RecentActivity.Rate(action: "signup", outcome: "ok", last1: last1, last5: last5, last15: last15)])
        }
    }

    @Test("as virtual time advances, events of several ages add up in each window")
    func severalAges() {
        let clock = Clock(Self.start)
        let activity = Self.activity(clock)
        // 12 minutes ago, 4 minutes ago and just now (query at start + 12 min).
        activity.submitted(.login, outcome: .loggedIn(user: "a", token: "t"), peer: 1000)
        clock.set(Self.start + 8 * Self.minute)
        activity.submitted(.login, outcome: .loggedIn(user: "a", token: "t"), peer: 1000)
        activity.submitted(.login, outcome: .loggedIn(user: "b", token: "u"), peer: 1001)
        clock.set(Self.start + 12 * Self.minute)
        activity.submitted(.login, outcome: .loggedIn(user: "c", token: "v"), peer: 1002)
        #expect(activity.rates() == [RecentActivity.Rate(action: "login", outcome: "ok", last1: 1, last5: 3, last15: 4)])
        clock.set(Self.start + 17 * Self.minute)
        // The first is past 15 minutes, the two of minute 8 are 9 minutes old, the last 5.
        #expect(activity.rates() == [RecentActivity.Rate(action: "login", outcome: "ok", last1: 0, last5: 0, last15: 3)])
    }

    @Test("the last minute ends on a slot boundary: 59.9 s after is in it, 60 s after is not")
    func lastMinuteBoundary() {
        let clock = Clock(Self.start)
        let activity = Self.activity(clock)
        activity.submitted(.signup, outcome: .rateLimited, peer: 1000)
        clock.set(Self.start + 59 * Self.second + 900_000_000)
        #expect(activity.rates().first?.last1 == 1)
        clock.set(Self.start + 60 * Self.second)
        #expect(activity.rates().first?.last1 == 0)
        #expect(activity.rates().first?.last5 == 1)
    }

    @Test("each action and outcome is its own row, sorted by action then outcome")
    func outcomeLabels() {
        let clock = Clock(Self.start)
        let activity = Self.activity(clock)
        activity.submitted(.signup, outcome: .signedUp(user: "a"), peer: 1000)
        activity.submitted(.signup, outcome: .signedUp(user: "b"), peer: 1000)
        activity.submitted(.signup, outcome: .usernameTaken, peer: 1000)
        activity.submitted(.signup, outcome: .usernameTooSimilar, peer: 1000)
        activity.submitted(.signup, outcome: .signupsPaused(note: "maintenance"), peer: 1000)
        activity.submitted(.signup, outcome: .storeUnavailable, peer: 1000)
        activity.submitted(.login, outcome: .rateLimited, peer: 1000)
        activity.submitted(.login, outcome: .rateLimited, peer: 1001)
        activity.submitted(.login, outcome: .rateLimited, peer: 1002)
        activity.submitted(.login, outcome: .invalidCredentials, peer: 1000)
        activity.submitted(.login, outcome: .loggedIn(user: "a", token: "t"), peer: 1000)
        clock.set(Self.start + 20 * Self.second)
        let rows = activity.rates().map { "\($0.action) \($0.outcome) \($0.last1)/\($0.last5)/\($0.last15)" }
        #expect(rows == [
            "login failed 1/1/1", "login ok 1/1/1", "login throttled 3/3/3",
            "signup ok 2/2/2", "signup paused 1/1/1", "signup taken 1/1/1", "signup too_similar 1/1/1", "signup unavailable 1/1/1",
        ])
    }

    @Test("a slot reused after 15 minutes starts from zero")
    func slotReuse() {
        let clock = Clock(Self.start)
        let activity = Self.activity(clock)
        for _ in 0..<5 { activity.submitted(.signup, outcome: .signedUp(user: "a"), peer: 1000) }
        // The same slot of the ring, one lap later.
        clock.set(Self.start + 15 * Self.minute)
        activity.submitted(.signup, outcome: .signedUp(user: "b"), peer: 1000)
        #expect(activity.rates() == [RecentActivity.Rate(action: "signup", outcome: "ok", last1: 1, last5: 1, last15: 1)])
    }

    @Test("nothing submitted: no rows")
    func empty() {
        let clock = Clock(Self.start)
        #expect(Self.activity(clock).rates().isEmpty)
    }
}

// MARK: DaemonMetrics

@Suite("DaemonMetrics: submit outcomes as labels of the right metric")
struct DaemonMetricsOutcomeTests {
    @Test("signup outcomes go to signupd_signups_total with their label", arguments: [
        (SubmitOutcome.signedUp(user: "alice"), "ok"),
        (.usernameTaken, "taken"),
        (.usernameTooSimilar, "too_similar"),
        (.rateLimited, "throttled"),
        (.storeUnavailable, "unavailable"),
        (.signupsPaused(note: nil), "paused"),
        (.signupsPaused(note: "back at noon"), "paused"),
    ])
    func signups(_ outcome: SubmitOutcome, _ label: String) {
        let metrics = DaemonMetrics(version: "test")
        metrics.submitted(.signup, form: "signup", outcome: outcome)
        metrics.submitted(.signup, form: "signup", outcome: outcome)
        let samples = metrics.samples(named: DaemonMetrics.Name.signups)
        #expect(samples.count == 1)
        #expect(samples.first?.labels == ["form": "signup", "outcome": label])
        #expect(samples.first.flatMap { Double($0.value) } == 2)
        #expect(metrics.samples(named: DaemonMetrics.Name.logins).isEmpty)
    }

    @Test("login outcomes go to signupd_logins_total with their label", arguments: [
        (SubmitOutcome.loggedIn(user: "alice", token: "t"), "ok"),
        (.invalidCredentials, "failed"),
        (.rateLimited, "throttled"),
        (.storeUnavailable, "unavailable"),
    ])
    func logins(_ outcome: SubmitOutcome, _ label: String) {
        let metrics = DaemonMetrics(version: "test")
        metrics.submitted(.login, form: "phone-login", outcome: outcome)
        let samples = metrics.samples(named: DaemonMetrics.Name.logins)
        #expect(samples.count == 1)
        #expect(samples.first?.labels == ["form": "phone-login", "outcome": label])
        #expect(samples.first.flatMap { Double($0.value) } == 1)
        #expect(metrics.samples(named: DaemonMetrics.Name.signups).isEmpty)
    }

    @Test("each form and outcome is its own series")
    func seriesApart() {
        let metrics = DaemonMetrics(version: "test")
        metrics.submitted(.signup, form: "signup", outcome: .signedUp(user: "a"))
        metrics.submitted(.signup, form: "phone-signup", outcome: .signedUp(user: "b"))
        metrics.submitted(.signup, form: "signup", outcome: .usernameTaken)
        metrics.submitted(.signup, form: "signup", outcome: .signedUp(user: "c"))
        let counts = Dictionary(uniqueKeysWithValues: metrics.samples(named: DaemonMetrics.Name.signups).map {
            ("\($0.labels["form"] ?? "?") \($0.labels["outcome"] ?? "?")", Double($0.value) ?? -1)
        })
        #expect(counts == ["signup ok": 2, "phone-signup ok": 1, "signup taken": 1])
    }

    @Test("the metric names as operators scrape them, with HELP and TYPE")
    func names() {
        #expect(DaemonMetrics.Name.signups == "signupd_signups_total")
        #expect(DaemonMetrics.Name.logins == "signupd_logins_total")
        let metrics = DaemonMetrics(version: "test")
        metrics.submitted(.login, form: "login", outcome: .invalidCredentials)
        let text = metrics.text
        #expect(text.contains("# TYPE signupd_logins_total counter\n"))
        #expect(text.contains("# HELP signupd_logins_total Logins ended"))
        #expect(text.contains(#"version="test""#))
    }
}

// MARK: OperatorOptions

@Suite("--metrics-listen ADDR:PORT")
struct MetricsListenTests {
    @Test("accepted", arguments: [
        ("127.0.0.1:9464", "127.0.0.1", 9464),
        ("[::1]:9464", "::1", 9464),
        ("localhost:1", "localhost", 1),
        ("0.0.0.0:65535", "0.0.0.0", 65535),
        ("[2001:db8::1]:80", "2001:db8::1", 80),
    ])
    func accepted(_ text: String, _ host: String, _ port: Int) throws {
        #expect(try OperatorOptions.tcp(text) == .tcp(host: host, port: port))
    }

    @Test("refused", arguments: [
        "9464", "[::1]9464", "host:0", "host:70000", ":80", "[]:80", "host:", "host:port", "", "[::1]",
        // An IPv6 address without brackets, an unclosed bracket, a signed port.
        "2001:db8::1", "[::1", "host:+80",
    ])
    func refused(_ text: String) {
        #expect(throws: (any Error).self) { try OperatorOptions.tcp(text) }
    }
}

/// The journal's plain text: a value that could be read as more than one is quoted.
struct JournalPlainTextTests {
    @Test("a client name cannot write uid=0 into a line; ordinary values stay as they are")
    func quoting() {
        #expect(JournalLogHandler.plain(.string("web-3f2a")) == "web-3f2a")
        #expect(JournalLogHandler.plain(.string("too many requests; slow down")) == "too many requests; slow down")
        #expect(JournalLogHandler.plain(.string("x, uid=0")) == #""x, uid=0""#)
        #expect(JournalLogHandler.plain(.string(#"say "hi" (now)"#)) == #""say \"hi\" (now)""#)
        #expect(JournalLogHandler.plain(.string(#"back\slash="#)) == #""back\\slash=""#)
        #expect(JournalLogHandler.plain(.string("")) == #""""#)
        let line = JournalLogHandler.message("login failed", ["client=\(JournalLogHandler.plain(.string("a, uid=0")))", "uid=1004"])
        #expect(line == #"login failed (client="a, uid=0", uid=1004)"#)
    }
}
