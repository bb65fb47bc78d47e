import CSodium

/// Login tokens: 256 random bits, base64url without padding (43 characters). Only their
/// SHA-256 is stored.
enum LoginTokens {
    static let encodedLength = 43

    /// A fresh token from libsodium's CSPRNG.
    static func generate() -> String {
        var raw = [UInt8](repeating: 0, count: 32)
        randombytes_buf(&raw, raw.count)
        var encoded = [CChar](repeating: 0, count: Int(sodium_base64_encoded_len(32, sodium_base64_VARIANT_URLSAFE_NO_PADDING)))
        _ = sodium_bin2base64(&encoded, encoded.count, raw, raw.count, sodium_base64_VARIANT_URLSAFE_NO_PADDING)
        sodium_memzero(&raw, raw.count)
        return String(decoding: encoded.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Whether `token` has the shape of one of ours (checked before touching the store).
    static func isWellFormed(_ token: String) -> Bool {
        token.utf8.count == encodedLength && token.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"): true
            default: false
            }
        }
    }

    /// The stored form of a token.
    static func hash(_ token: String) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: Int(crypto_hash_sha256_bytes()))
        let bytes = Array(token.utf8)
        _ = crypto_hash_sha256(&digest, bytes, UInt64(bytes.count))
        return digest
    }
}
