#if canImport(Glibc)
import Glibc
#endif
import NIOSSL
import UnixIO

/// TLS for an `https://` availability URL, loaded once at start: the certificate chain is
/// verified against the system's trust store, or only against the CA certificates of
/// `--availability-ca-file` when given, and must name the URL's host.
struct AvailabilityTLS: Sendable {
    let context: NIOSSLContext
    /// Where trust comes from, for the start log.
    let trust: String
    /// What to warn about at start (a private key in the CA file).
    var warnings: [String] = []

    /// Bigger is not a CA bundle (Debian's whole bundle is about 200 KiB).
    static let maxCAFileBytes = 4 << 20

    /// The TLS configuration of the checks; an unreadable or invalid CA file is a startup
    /// error naming it.
    static func load(caFile: String?) throws(DaemonError) -> AvailabilityTLS {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.certificateVerification = .fullVerification
        // A superseded check closes its connection: send close_notify and go. Waiting for
        // the service's own (NIOSSL's default: up to 5 s) would hold the pool slot, and the
        // session's next check, which starts once the aborted one has ended.
        configuration.shutdownTimeout = .zero
        let trust: String
        var warnings: [String] = []
        if let caFile {
            let loaded = try certificates(in: caFile)
            configuration.trustRoots = .certificates(loaded.certificates)
            if loaded.holdsPrivateKey {
                warnings.append("--availability-ca-file \(caFile) also holds a PRIVATE KEY: signupd needs only the CA certificates; keep the key out of it (and out of reach)")
            }
            trust = caFile
        } else {
            trust = "the system's trust store"
        }
        do {
            return AvailabilityTLS(context: try NIOSSLContext(configuration: configuration), trust: trust, warnings: warnings)
        } catch {
            throw .startup("--availability-url: cannot set up TLS with \(trust): \(AvailabilityFailure.describe(error))")
        }
    }

    /// Debian's bundle (ca-certificates), and where other systems keep theirs.
    static let systemBundles = [
        "/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt", "/etc/ssl/ca-bundle.pem",
        "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem", "/etc/ssl/cert.pem",
    ]

    /// Whether the system has a trust store to verify with (else every https check fails:
    /// worth a warning at start).
    static var systemStoreFound: Bool { systemBundles.contains { access($0, R_OK) == 0 } }

    /// The PEM certificates in `path`, read whole (a regular file, at most 4 MiB, that only
    /// root or signupd's user can change, in a directory checked like the socket's), and
    /// whether it also holds a private key.
    static func certificates(in path: String) throws(DaemonError) -> (certificates: [NIOSSLCertificate], holdsPrivateKey: Bool) {
        func refuse(_ why: String) -> DaemonError { .startup("--availability-ca-file \(path): \(why)") }
        do {
            try PrivateDirectory.check(PrivateDirectory.parent(of: path), sharedSticky: true)
        } catch {
            throw refuse("\(error.description) (whoever can write there can choose whom signupd trusts)")
        }
        guard let file = fopen(path, "r") else { throw refuse("cannot read it: \(UnixIO.errnoText(errno))") }
        defer { fclose(file) }
        var status = stat()
        guard fstat(fileno(file), &status) == 0 else { throw refuse("cannot read it: \(UnixIO.errnoText(errno))") }
        guard status.st_mode & S_IFMT == S_IFREG else { throw refuse("not a regular file; give a PEM file of CA certificates") }
        if let refusal = PrivateDirectory.fileRefusal(status) { throw refuse(refusal + " (whoever can write it can choose whom signupd trusts)") }
        guard status.st_size <= maxCAFileBytes else { throw refuse("larger than \(maxCAFileBytes >> 20) MiB; give a PEM file of CA certificates") }
        var bytes = [UInt8](repeating: 0, count: Int(status.st_size))
        let read = bytes.withUnsafeMutableBytes { fread($0.baseAddress, 1, $0.count, file) }
        guard read == bytes.count else { throw refuse("cannot read it: \(UnixIO.errnoText(errno))") }
        // A key, a DER file or a text: say so rather than BoringSSL's "no start line".
        let text = String(decoding: bytes, as: UTF8.self)
        guard text.contains("-----BEGIN CERTIFICATE-----") else { throw refuse(notPEM(text, bytes: bytes, path: path)) }
        guard let certificates = try? NIOSSLCertificate.fromPEMBytes(bytes), !certificates.isEmpty else {
            throw refuse("a certificate in it cannot be read (not valid PEM/X.509)")
        }
        return (certificates, text.contains("PRIVATE KEY-----"))
    }

    /// What a CA file without a PEM certificate holds instead, and how to convert it.
    private static func notPEM(_ text: String, bytes: [UInt8], path: String) -> String {
        let none = "holds no PEM certificate (-----BEGIN CERTIFICATE-----)"
        if text.contains("-----BEGIN TRUSTED CERTIFICATE-----") {
            return none + "; it holds OpenSSL's TRUSTED CERTIFICATE form: convert it with openssl x509 -in \(path) -out ca.pem"
        }
        if text.contains("-----BEGIN PKCS7-----") || path.lowercased().hasSuffix(".p7b") || path.lowercased().hasSuffix(".p7c") {
            return none + "; it looks like PKCS#7: convert it with openssl pkcs7 -print_certs -in \(path) -out ca.pem (add -inform DER for a binary one)"
        }
        // DER: an ASN.1 SEQUENCE (0x30) with a long-form length.
        if bytes.count > 4, bytes[0] == 0x30, bytes[1] & 0x80 != 0 {
            return none + "; it looks like DER (binary): convert it with openssl x509 -inform DER -in \(path) -out ca.pem"
        }
        return none
    }

    /// The TLS handler of one connection: SNI with the URL's host name (none for an
    /// address), the certificate checked for it.
    func handler(host: String) throws -> NIOSSLClientHandler {
        try NIOSSLClientHandler(context: context, serverHostname: AvailabilityFailure.isIPAddress(host) ? nil : host)
    }
}
