import Testing
@testable import SignupDaemonCore

/// When freed memory is given back (issues 27, 29): after a flood has passed, with a few
/// follow-ups while memory stays high, and then not again until another flood has come and gone.
@Suite struct MemoryReturnTests {
    private let mib = 1 << 20

    @Test func aFloodThatPassesIsTrimmedWhileItsLoadHalves() {
        var state = MemoryReturnState(margin: 16 * mib)
        #expect(state.observe(rss: 30 * mib, load: 2) == .none)
        // The flood: memory and load rise together; no trim while the load is high.
        #expect(state.observe(rss: 120 * mib, load: 4000) == .none)
        #expect(state.observe(rss: 215 * mib, load: 16_000) == .none)
        #expect(state.observe(rss: 215 * mib, load: 9000) == .none)
        // Half the peak: a trim, once, however long it takes.
        #expect(state.observe(rss: 215 * mib, load: 8000) == .trim)
        #expect(state.observe(rss: 215 * mib, load: 10) == .none)
        state.trimmed(rss: 150 * mib, load: 7000)
        // The rest of the flood ends: what it frees is trimmed too, a few looks later.
        #expect(state.observe(rss: 150 * mib, load: 3000) == .none)
        #expect(state.observe(rss: 150 * mib, load: 0) == .none)
        #expect(state.observe(rss: 150 * mib, load: 0) == .trim)
        // Within half the margin of its lowest: nothing more.
        state.trimmed(rss: 37 * mib, load: 0)
        for _ in 0..<10 { #expect(state.observe(rss: 37 * mib, load: 0) == .none) }
    }

    /// A flood to 200 MiB that passed, trimmed once to 180 MiB.
    private func trimmedOnceAfterAFlood() -> MemoryReturnState {
        var state = MemoryReturnState(margin: 16 * mib)
        _ = state.observe(rss: 30 * mib, load: 2)
        _ = state.observe(rss: 200 * mib, load: 16_000)
        #expect(state.observe(rss: 200 * mib, load: 0) == .trim)
        state.trimmed(rss: 180 * mib, load: 0)
        return state
    }

    @Test func memoryThatStaysDoesNotTrimAgainAndAgain() {
        // Fragmentation kept most of it: a follow-up three looks later, which finds nothing to
        // return (under 1 MiB), and then no trim each second for nothing.
        var state = trimmedOnceAfterAFlood()
        var trimsAt: [Int] = []
        for look in 1...200 where state.observe(rss: 180 * mib, load: 0) == .trim {
            trimsAt.append(look)
            state.trimmed(rss: 180 * mib - 512 * 1024, load: 0)
        }
        #expect(trimsAt == [3])
        // A second flood that passes is trimmed again.
        #expect(state.observe(rss: 260 * mib, load: 9000) == .none)
        #expect(state.observe(rss: 260 * mib, load: 100) == .trim)
    }

    /// The first trim came while half the flood was still closing; when the rest had closed
    /// the load was already below any peak worth halving: a follow-up trims what they freed.
    /// Also when the first trim left the set just under the margin above its lowest (CI: 68
    /// MiB, lowest 51, 17 MiB of free heap kept): follow-ups go on down to half the margin.
    @Test(arguments: [74, 66])
    func sessionsThatEndAfterTheTrimAreTrimmedByAFollowUp(afterFirstTrim: Int) {
        var state = MemoryReturnState(margin: 16 * mib)
        _ = state.observe(rss: 51 * mib, load: 2)
        _ = state.observe(rss: 76 * mib, load: 4352)
        #expect(state.observe(rss: 76 * mib, load: 2100) == .trim)
        state.trimmed(rss: afterFirstTrim * mib, load: 100)
        #expect(state.observe(rss: afterFirstTrim * mib, load: 0) == .none)
        #expect(state.observe(rss: afterFirstTrim * mib, load: 0) == .none)
        #expect(state.observe(rss: afterFirstTrim * mib, load: 0) == .trim)
        state.trimmed(rss: 56 * mib, load: 0)
        // Within half the margin of its lowest: nothing more to give.
        for _ in 0..<50 { #expect(state.observe(rss: 56 * mib, load: 0) == .none) }
    }

    @Test func aRisingLoadGetsNoFollowUp() {
        var state = MemoryReturnState(margin: 16 * mib)
        _ = state.observe(rss: 30 * mib, load: 2)
        _ = state.observe(rss: 200 * mib, load: 1000)
        #expect(state.observe(rss: 200 * mib, load: 400) == .trim)
        state.trimmed(rss: 190 * mib, load: 400)
        for _ in 0..<20 { #expect(state.observe(rss: 190 * mib, load: 450) == .none) }
    }

    /// CI, 2026-11-27: the flood came in the daemon's first second, so the first look (one
    /// second after start) was at 72 MiB, mid-flood, and counted as the lowest; at 74 MiB
    /// after it nothing was 16 MiB above that, no trim came, and the set stayed at 1.49× for
    /// 90 s. `MemoryReturn` now takes its first look at start.
    @Test func aFloodInTheFirstSecondIsMeasuredAgainstTheStart() {
        var state = MemoryReturnState(margin: 16 * mib)
        _ = state.observe(rss: 51 * mib, load: 0)
        _ = state.observe(rss: 72 * mib, load: 3861)
        #expect(state.observe(rss: 74 * mib, load: 1, highest: 4353) == .trim)
        // Without the look at start the same looks trim nothing.
        var late = MemoryReturnState(margin: 16 * mib)
        _ = late.observe(rss: 72 * mib, load: 3861)
        #expect(late.observe(rss: 74 * mib, load: 1, highest: 4353) == .none)
    }

    /// The most load since the previous look counts: a flood that rose and ended between two
    /// looks is still a flood.
    @Test func aFloodBetweenTwoLooksIsStillAFlood() {
        var state = MemoryReturnState(margin: 16 * mib)
        _ = state.observe(rss: 51 * mib, load: 2)
        #expect(state.observe(rss: 76 * mib, load: 0, highest: 4352) == .trim)
        // Without the high-water mark the same looks trim nothing.
        var blind = MemoryReturnState(margin: 16 * mib)
        _ = blind.observe(rss: 51 * mib, load: 2)
        #expect(blind.observe(rss: 76 * mib, load: 0) == .none)
    }

    @Test func loadThatFallsWithoutMemoryToGiveIsLeftAlone() {
        var state = MemoryReturnState(margin: 16 * mib)
        _ = state.observe(rss: 30 * mib, load: 2)
        _ = state.observe(rss: 40 * mib, load: 1000)
        #expect(state.observe(rss: 40 * mib, load: 0) == .none)
    }

    @Test func ordinaryUpsAndDownsAreNoFlood() {
        var state = MemoryReturnState(margin: 16 * mib)
        _ = state.observe(rss: 30 * mib, load: 2)
        _ = state.observe(rss: 60 * mib, load: 200)
        #expect(state.observe(rss: 60 * mib, load: 10) == .none)
    }

    /// While each follow-up still gives something back, they go on at doubling spacing (3, 6,
    /// 12 looks), and stop after three.
    @Test func followUpsThatReturnMemoryGoOnUpToThree() {
        var state = trimmedOnceAfterAFlood()
        var rss = 180 * mib
        var trimsAt: [Int] = []
        for look in 1...200 where state.observe(rss: rss, load: 0) == .trim {
            trimsAt.append(look)
            rss -= 2 * mib
            state.trimmed(rss: rss, load: 0)
        }
        #expect(trimsAt == [3, 9, 21])
    }

    /// helper-25: with a 16 MiB margin a daemon that started at 41 MB settled 9-17 MB above
    /// it after floods and was never trimmed; the daemon's margin is 4 MiB.
    @Test func theDaemonTrimsAFloodThatLeftFourMiBOrMore() {
        var daemon = MemoryReturnState()
        #expect(daemon.margin == 4 * mib)
        _ = daemon.observe(rss: 41 * mib, load: 1)
        _ = daemon.observe(rss: 57 * mib, load: 4353)
        #expect(daemon.observe(rss: 50 * mib, load: 1) == .trim)
        var wide = MemoryReturnState(margin: 16 * mib)
        _ = wide.observe(rss: 41 * mib, load: 1)
        _ = wide.observe(rss: 57 * mib, load: 4353)
        #expect(wide.observe(rss: 50 * mib, load: 1) == .none)
    }

    @Test func theResidentSetIsRead() throws {
        let rss = try #require(MemoryReturn.residentBytes())
        #expect(rss > 1 << 20 && rss < 64 << 30)
    }
}
