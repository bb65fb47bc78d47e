/// "Did you mean …?" for a mistyped word on a command line: signupctl's subcommands and
/// signupd's options share one rule.
public enum Suggestion {
    /// The candidate `word` was most likely meant to be: the closest within a third of its
    /// length in edits (one at least, two at most; a swap of neighbours is one), else the
    /// only candidate that begins with it (two characters or more). Case is ignored.
    public static func closest(to word: String, among candidates: [String]) -> String? {
        let typed = word.lowercased()
        let scored = candidates.map { ($0, distance(typed, $0)) }
        if let best = scored.min(by: { $0.1 < $1.1 }), best.1 <= max(1, min(2, best.0.count / 3)) { return best.0 }
        let begun = candidates.filter { typed.count >= 2 && $0.hasPrefix(typed) }
        return begun.count == 1 ? begun[0] : nil
    }

    /// Optimal string alignment distance: edits, with a swap of neighbours counting once.
    public static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        if a.isEmpty || b.isEmpty { return max(a.count, b.count) }
        var d = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { d[i][0] = i }
        for j in 0...b.count { d[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] { d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1) }
            }
        }
        return d[a.count][b.count]
    }
}
