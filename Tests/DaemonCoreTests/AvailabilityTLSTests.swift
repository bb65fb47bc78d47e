import Foundation
import NIOCore
import Testing
@testable import SignupDaemonCore

/// The https side of the availability check, in process: the CA file read once at start
/// (every bad one a startup error naming it), the URL template's scheme, port and Host
/// header, and when the service's failures are logged.
@Suite final class AvailabilityTLSTests {
    /// A self-signed CA certificate (P-256, valid until 2126); its key was thrown away:
    /// loading a trust root needs only the certificate.
    static let caPEM = """
        -----BEGIN CERTIFICATE-----
        MIIBlDCCATugAwIBAgIUVClmR4vfx2bIeqZORSYqhUStsycwCgYIKoZIzj0EAwIw
        HzEdMBsGA1UEAwwUc2lnbnVwZCB1bml0IHRlc3QgQ0EwIBcNMjYxMTIzMDMwODA1
        WhgPMjEyNjEwMzAwMzA4MDVaMB8xHTAbBgNVBAMMFHNpZ251cGQgdW5pdCB0ZXN0
        IENBMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAENEkbUEOqKcm222/R84JJSyqM
        tui5XE7eCuneAJG7N9Yku/dsLw8Grs55U6KG4BNuqZSaUMP9mes/N7kbxmL/laNT
        MFEwHQYDVR0OBBYEFD+kA6AJvLEjId512iNQWKLmeyzVMB8GA1UdIwQYMBaAFD+k
        A6AJvLEjId512iNQWKLmeyzVMA8GA1UdEwEB/wQFMAMBAf8wCgYIKoZIzj0EAwID
        RwAwRAIgWhX2l7nSsav280Sf8+ewNOjBH6qqsEpArT+tkxD9vw4CIG7HsdhTqVZM
        ZhSIjCBJ+eFLn2HuEu3TkIUzS71MzhEY
        -----END CERTIFICATE-----
        """

    /// This test's files (Swift Testing makes a suite instance per test), removed after it.
    private let directory = FileManager.default.temporaryDirectory.appendingPathComponent("signupd-tls-\(UUID().uuidString)")

    deinit {
        chmod(directory.path, 0o755)
        try? FileManager.default.removeItem(at: directory)
    }

    private func temporaryFile(_ name: String, _ contents: String) throws -> String {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent(name).path
        try contents.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    private func startupError(caFile: String) -> String? {
        do {
            _ = try AvailabilityTLS.load(caFile: caFile)
            return nil
        } catch {
            return error.description
        }
    }

    @Test func aCAFileIsLoadedOnceAndNamedAsTheTrust() throws {
        let path = try temporaryFile("ca.pem", Self.caPEM)
        let tls = try AvailabilityTLS.load(caFile: path)
        #expect(tls.trust == path)
        #expect(try AvailabilityTLS.certificates(in: path).certificates.count == 1)
        #expect(tls.warnings.isEmpty)
        // Without one: the system's trust store.
        #expect(try AvailabilityTLS.load(caFile: nil).trust == "the system's trust store")
    }

    @Test func everyBadCAFileIsAStartupErrorNamingIt() throws {
        let missing = FileManager.default.temporaryDirectory.appendingPathComponent("signupd-no-such-\(UUID().uuidString).pem").path
        #expect(startupError(caFile: missing) == "--availability-ca-file \(missing): cannot read it: No such file or directory")
        let text = try temporaryFile("notes.txt", "not a certificate\n")
        #expect(startupError(caFile: text) == "--availability-ca-file \(text): holds no PEM certificate (-----BEGIN CERTIFICATE-----)")
        let broken = try temporaryFile("broken.pem", "-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydA==\n-----END CERTIFICATE-----\n")
        #expect(startupError(caFile: broken) == "--availability-ca-file \(broken): a certificate in it cannot be read (not valid PEM/X.509)")
        let directory = (text as NSString).deletingLastPathComponent
        #expect(startupError(caFile: directory) == "--availability-ca-file \(directory): not a regular file; give a PEM file of CA certificates")
        // A private key is not a certificate.
        let key = try temporaryFile("key.pem", "-----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg\n-----END PRIVATE KEY-----\n")
        #expect(startupError(caFile: key) == "--availability-ca-file \(key): holds no PEM certificate (-----BEGIN CERTIFICATE-----)")
    }

    @Test func aCAFileOthersCouldRewriteIsRefusedLikeAFormFile() throws {
        // Writable by others: whoever writes it chooses whom signupd trusts.
        let open = try temporaryFile("ca.pem", Self.caPEM)
        chmod(open, 0o666)
        #expect(startupError(caFile: open) == "--availability-ca-file \(open): refusing it: it is writable by group or others (mode 0666); run chmod go-w on it (whoever can write it can choose whom signupd trusts)")
        // In a directory others can write (not sticky): the file could be replaced.
        let replaceable = try temporaryFile("ca.pem", Self.caPEM)
        let directory = (replaceable as NSString).deletingLastPathComponent
        chmod(directory, 0o777)
        #expect(startupError(caFile: replaceable)?.hasPrefix("--availability-ca-file \(replaceable): refusing \(directory): it is writable by group or others (mode 0777); run chmod go-w on it") == true)
        chmod(directory, 0o755)
        #expect(startupError(caFile: replaceable) == nil)
    }

    @Test func aCAFileWithAPrivateKeyIsWarnedAbout() throws {
        let key = "-----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg\n-----END PRIVATE KEY-----\n"
        let path = try temporaryFile("ca.pem", Self.caPEM + "\n" + key)
        let tls = try AvailabilityTLS.load(caFile: path)
        #expect(tls.warnings == ["--availability-ca-file \(path) also holds a PRIVATE KEY: signupd needs only the CA certificates; keep the key out of it (and out of reach)"])
    }

    @Test func aCAFileInAnotherFormatSaysHowToConvertIt() throws {
        let body = Self.caPEM.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
        let der = try #require(Data(base64Encoded: body))
        let derPath = try temporaryFile("ca.der", "")
        try der.write(to: URL(fileURLWithPath: derPath))
        #expect(startupError(caFile: derPath)?.contains("it looks like DER (binary): convert it with openssl x509 -inform DER -in \(derPath) -out ca.pem") == true)
        let trusted = try temporaryFile("trusted.pem", Self.caPEM.replacingOccurrences(of: "CERTIFICATE", with: "TRUSTED CERTIFICATE"))
        #expect(startupError(caFile: trusted)?.contains("TRUSTED CERTIFICATE form: convert it with openssl x509 -in \(trusted) -out ca.pem") == true)
        let pkcs7 = try temporaryFile("ca.p7b", "-----BEGIN PKCS7-----\nMIIB\n-----END PKCS7-----\n")
        #expect(startupError(caFile: pkcs7)?.contains("it looks like PKCS#7: convert it with openssl pkcs7 -print_certs -in \(pkcs7) -out ca.pem") == true)
    }

    @Test func httpsTemplatesDefaultToPort443AndTheHostHeaderOmitsTheSchemesPort() throws {
        let plain = try AvailabilityURLTemplate("https://users.example.org/users/{key}")
        #expect(plain.isHTTPS && plain.port == 443 && plain.hostHeader == "users.example.org")
        let other = try AvailabilityURLTemplate("HTTPS://users.example.org:8443/users/{key}")
        #expect(other.isHTTPS && other.port == 8443 && other.hostHeader == "users.example.org:8443")
        let http = try AvailabilityURLTemplate("http://users.example.org/users/{username}")
        #expect(!http.isHTTPS && http.port == 80 && http.hostHeader == "users.example.org")
        #expect(try AvailabilityURLTemplate("http://h:443/u/{key}").hostHeader == "h:443")
        #expect(try AvailabilityURLTemplate("https://h:80/u/{key}").hostHeader == "h:80")
        let v6 = try AvailabilityURLTemplate("https://[::1]:9443/u/{key}")
        #expect(v6.host == "::1" && v6.hostHeader == "[::1]:9443")
        #expect(try AvailabilityURLTemplate("https://[::1]/u/{key}").hostHeader == "[::1]")
        #expect(throws: AvailabilityURLTemplate.ParseError.self) { try AvailabilityURLTemplate("ftp://h/u/{key}") }
        #expect(throws: AvailabilityURLTemplate.ParseError.self) { try AvailabilityURLTemplate("https://:8443/u/{key}") }
    }

    /// Times for the health's quiet period (60 s).
    private let t0 = NIODeadline.uptimeNanoseconds(1_000_000_000)

    @Test func aFailingServiceIsLoggedOnceGoingAndOnceComingBack() {
        var health = AvailabilityServiceHealth()
        #expect(health.answered(at: t0) == .none)
        #expect(health.failed("connection refused", at: t0) == .logUnreachable(cause: "connection refused"))
        // Every keystroke after that fails too: nothing more is logged.
        #expect(health.failed("connection refused", at: t0) == .none)
        #expect(health.answered(at: t0) == .logAnswering(wasUnreachable: "connection refused"))
        #expect(health.answered(at: t0) == .none)
        let later = t0 + .seconds(61)
        #expect(health.failed("the service's certificate does not name h", at: later) == .logUnreachable(cause: "the service's certificate does not name h"))
    }

    @Test func aNewCauseWhileUnreachableIsLoggedOnceAndTheLatestIsReportedOnRecovery() {
        var health = AvailabilityServiceHealth()
        #expect(health.failed("connection refused", at: t0) == .logUnreachable(cause: "connection refused"))
        #expect(health.failed("no answer within 3 s", at: t0) == .logCauseChanged(cause: "no answer within 3 s", was: "connection refused"))
        #expect(health.failed("no answer within 3 s", at: t0) == .none)
        // Alternating causes: each is logged once in an outage, not once per keystroke.
        #expect(health.failed("connection refused", at: t0) == .none)
        #expect(health.failed("no answer within 3 s", at: t0) == .none)
        #expect(health.answered(at: t0) == .logAnswering(wasUnreachable: "no answer within 3 s"))
        #expect(health.failed("no answer within 3 s", at: t0 + .seconds(61)) == .logUnreachable(cause: "no answer within 3 s"))
    }

    /// Fresh eyes: under one user's burst the service answered some checks and not others,
    /// and the log said "unreachable" and "answers again" 34 times each in 5 s.
    @Test func aServiceThatFailsAgainSoonAfterRecoveringIsLoggedOnceAsIntermittent() {
        var health = AvailabilityServiceHealth()
        #expect(health.failed("no answer within 3 s", at: t0) == .logUnreachable(cause: "no answer within 3 s"))
        #expect(health.answered(at: t0 + .seconds(1)) == .logAnswering(wasUnreachable: "no answer within 3 s"))
        #expect(health.failed("no answer within 3 s", at: t0 + .seconds(2)) == .logIntermittent(cause: "no answer within 3 s"))
        var logged = 0
        for second in 3..<60 {
            if health.answered(at: t0 + .seconds(Int64(second))) != .none { logged += 1 }
            if health.failed(second.isMultiple(of: 2) ? "no answer within 3 s" : "connection reset", at: t0 + .milliseconds(Int64(second) * 1000 + 500)) != .none { logged += 1 }
        }
        #expect(logged == 0)
        // A minute after the recovery that was logged, changes are logged again.
        #expect(health.answered(at: t0 + .seconds(62)) == .logAnswering(wasUnreachable: "connection reset"))
        #expect(health.failed("connection refused", at: t0 + .seconds(200)) == .logUnreachable(cause: "connection refused"))
    }
}
