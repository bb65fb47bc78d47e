import CSodium

/// Argon2id through libsodium's `crypto_pwhash_str`: memory-hard, salted, encoded with
/// its parameters so they can be raised later (`needsRehash`). Verification is constant
/// time in libsodium.
struct PasswordHasher: Sendable {
    let cost: DaemonConfiguration.HashCost

    /// libsodium's "interactive" profile: 2 passes over 64 MiB.
    static var interactive: DaemonConfiguration.HashCost {
        .init(operations: UInt64(crypto_pwhash_opslimit_interactive()), memoryBytes: Int(crypto_pwhash_memlimit_interactive()))
    }

    /// Initialises libsodium; call once before any other use.
    static func initialise() throws(DaemonError) {
        guard sodium_init() >= 0 else { throw .startup("libsodium failed to initialise") }
    }

    enum HashError: Error { case outOfMemory }

    /// Hashes a password into libsodium's `$argon2id$...` string.
    func hash(_ password: String) throws(HashError) -> String {
        var output = [CChar](repeating: 0, count: Int(crypto_pwhash_strbytes()))
        let status = password.utf8CString.withUnsafeBufferPointer { pw in
            crypto_pwhash_str_alg(
                &output, pw.baseAddress!, UInt64(pw.count - 1), cost.operations, cost.memoryBytes, crypto_pwhash_alg_argon2id13()
            )
        }
        guard status == 0 else { throw .outOfMemory }
        return String(decoding: output.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Whether `password` matches `hash`, in constant time.
    func verify(_ password: String, against hash: String) -> Bool {
        hash.withCString { stored in
            password.utf8CString.withUnsafeBufferPointer { pw in
                crypto_pwhash_str_verify(stored, pw.baseAddress!, UInt64(pw.count - 1)) == 0
            }
        }
    }

    /// Whether `hash` was made with other parameters than the current ones.
    func needsRehash(_ hash: String) -> Bool {
        hash.withCString { crypto_pwhash_str_needs_rehash($0, cost.operations, cost.memoryBytes) != 0 }
    }
}
