import Testing

@testable import SignupDaemonCore

@Suite("Similarity keys recomputed: the first account owns a key, later ones collide with it")
struct SimilarityKeyOwnersTests {
    @Test("owners per key and collidesWith, in account order, compared by bytes")
    func claims() {
        var owners = SimilarityKeyOwners()
        let first = owners.claim(["bob", "b0b"], for: 1)
        #expect(first.owners == [nil, nil] && first.collidesWith == nil)
        let second = owners.claim(["x", "b0b", "bob"], for: 2)
        #expect(second.owners == [nil, 1, 1] && second.collidesWith == 1)
        // "é" precomposed and decomposed are equal Strings but different bytes: two keys.
        let third = owners.claim(["\u{E9}"], for: 3)
        let fourth = owners.claim(["e\u{301}"], for: 4)
        #expect(third.collidesWith == nil && fourth.collidesWith == nil)
        #expect(owners.claim(["x"], for: 5).collidesWith == 2)
    }
}
