import CSodium

/// The secret that takes a session back after its connection dropped (`resume`): 128
/// random bits from libsodium, in lowercase hex. Compared in constant time.
enum ResumeSecret {
    static func generate() -> String {
        var bytes = [UInt8](repeating: 0, count: 16)
        randombytes_buf(&bytes, bytes.count)
        return bytes.map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
    }

    /// Whether `given` is `secret`, taking as long whatever the first difference.
    static func matches(_ given: String, _ secret: String) -> Bool {
        let a = Array(given.utf8)
        let b = Array(secret.utf8)
        guard a.count == b.count else { return false }
        return a.withUnsafeBytes { x in b.withUnsafeBytes { y in sodium_memcmp(x.baseAddress, y.baseAddress, a.count) == 0 } }
    }
}
