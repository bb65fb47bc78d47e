import FormEngine
import Testing

/// Who keeps what when a handover state does not fit (issue 27): equal shares of the bytes,
/// the small owners whole, a big owner its smallest sessions first.
@Suite struct HandoverShareTests {
    @Test func everythingFitsEverythingIsKept() {
        #expect(HandoverShare.keep(sizes: [10, 20, 30], owners: ["a", "b", "a"], limit: 60) == [true, true, true])
    }

    @Test func smallOwnersAreWholeAndTheBiggestGetsWhatIsLeft() {
        // Limit 100 for three owners: b (10) and c (30) fit within a third; a gets the 60 left.
        let sizes = [25, 25, 25, 25, 10, 30]
        let owners = ["a", "a", "a", "a", "b", "c"]
        #expect(HandoverShare.keep(sizes: sizes, owners: owners, limit: 100) == [true, true, false, false, true, true])
    }

    @Test func twoBigOwnersSplitEvenlyAndKeepTheirSmallestFirst() {
        let sizes = [40, 10, 30, 40, 40, 40]
        let owners = ["a", "a", "a", "b", "b", "b"]
        // 100 in all: 50 each; a keeps 10 + 30, b one of its 40s.
        #expect(HandoverShare.keep(sizes: sizes, owners: owners, limit: 100) == [false, true, true, true, false, false])
    }

    @Test func aSessionLargerThanItsShareIsLeftOutAlone() {
        #expect(HandoverShare.keep(sizes: [500, 5], owners: ["a", "b"], limit: 100) == [false, true])
        #expect(HandoverShare.keep(sizes: [5, 5], owners: ["a", "b"], limit: 0) == [false, false])
    }
}
