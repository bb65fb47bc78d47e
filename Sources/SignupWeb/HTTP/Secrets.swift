/// Random secrets for cookies, CSRF tokens and login claims: 128 bits from the kernel's
/// generator (`getrandom`, through `SystemRandomNumberGenerator`), as 32 hex digits.
enum Secrets {
    static func make() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<2).map { _ in
            let value = generator.next() as UInt64
            let hex = String(value, radix: 16)
            return String(repeating: "0", count: 16 - hex.count) + hex
        }.joined()
    }

    /// A cookie's secret if it is one of ours, else a new one (`isNew`: the answer sets it).
    static func kept(_ cookie: String?) -> (value: String, isNew: Bool) {
        if let cookie, isWellFormed(cookie) { return (cookie, false) }
        return (make(), true)
    }

    /// Whether `text` looks like one of ours (so a cookie value is never used unchecked).
    static func isWellFormed(_ text: String) -> Bool {
        text.utf8.count == 32 && text.utf8.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0) }
    }

    /// Equality that takes the same time wherever the strings differ.
    static func equal(_ a: String, _ b: String) -> Bool {
        let (x, y) = (Array(a.utf8), Array(b.utf8))
        guard x.count == y.count else { return false }
        var difference: UInt8 = 0
        for index in x.indices { difference |= x[index] ^ y[index] }
        return difference == 0
    }
}
