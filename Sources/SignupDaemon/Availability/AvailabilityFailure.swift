#if canImport(Glibc)
import Glibc
#endif
import NIOCore
import NIOHTTP1
import NIOSSL

/// Why an availability check got no answer, in words for the administrator's log: the
/// client only ever sees "Error contacting server".
enum AvailabilityFailure {
    /// The service's certificate does not name the URL's host (`PostgresServerName`'s rule).
    struct WrongName: Error {
        let host: String
        /// The names the certificate carries (subjectAltName DNS and IP entries).
        var names: [String] = []

        init(host: String, certificate: NIOSSLCertificate?) {
            self.host = host
            names = certificate.map(AvailabilityFailure.names(in:)) ?? []
        }

        var description: String {
            let carried = names.isEmpty ? "it names no DNS name or address (subjectAltName)" : "it names \(names.joined(separator: ", "))"
            return "the service's certificate does not name \(host): \(carried); write one of its names in the URL"
        }
    }

    /// The subjectAltName entries of `certificate`, as text.
    static func names(in certificate: NIOSSLCertificate) -> [String] {
        certificate._subjectAlternativeNames().compactMap { name in
            switch name.nameType {
            case .dnsName: return String(decoding: Array(name.contents), as: UTF8.self)
            case .ipAddress:
                let bytes = Array(name.contents)
                let family = bytes.count == 4 ? AF_INET : bytes.count == 16 ? AF_INET6 : -1
                guard family != -1 else { return nil }
                var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
                guard inet_ntop(family, bytes, &text, socklen_t(text.count)) != nil else { return nil }
                return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            default: return nil
            }
        }
    }

    /// The handshake did not finish in time.
    struct HandshakeTimeout: Error { let seconds: String }

    /// The connection ended before the handshake did, without a TLS error of its own.
    struct ClosedDuringHandshake: Error {}

    /// The service's certificate is outside its validity period (what BoringSSL's
    /// CERTIFICATE_VERIFY_FAILED was about).
    struct OutOfDate: Error {
        let expired: Bool
        let date: String

        /// Nil when `certificate` is valid now (the verification failed for another reason).
        init?(_ certificate: NIOSSLCertificate, now: time_t = time(nil)) {
            if certificate.notValidAfter < now {
                expired = true
                date = Self.utc(certificate.notValidAfter)
            } else if certificate.notValidBefore > now {
                expired = false
                date = Self.utc(certificate.notValidBefore)
            } else {
                return nil
            }
        }

        var description: String {
            expired ? "the service's certificate expired on \(date)" : "the service's certificate is not valid yet (from \(date); is the clock right?)"
        }

        private static func utc(_ seconds: time_t) -> String {
            var moment = seconds
            var parts = tm()
            gmtime_r(&moment, &parts)
            var buffer = [CChar](repeating: 0, count: 32)
            let count = strftime(&buffer, buffer.count, "%Y-%m-%d %H:%M:%S UTC", &parts)
            return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
    }

    /// `https`: the URL's scheme, for advice that depends on it.
    static func describe(_ error: any Error, https: Bool = true) -> String {
        if let dated = error as? OutOfDate { return dated.description }
        if let wrong = error as? WrongName { return wrong.description }
        if error is HTTPParserError { return "the service's answer is not HTTP" }
        if let error = error as? IOError, error.errnoCode == ECONNRESET {
            return https ? "connection reset by the service" : "connection reset by the service (does it speak TLS? use https://)"
        }
        if let timeout = error as? HandshakeTimeout { return "no TLS handshake within \(timeout.seconds) s" }
        if error is ClosedDuringHandshake { return "the service closed the connection during the TLS handshake" }
        if let error = error as? NIOSSLExtraError, error == .failedToValidateHostname {
            return "the service's certificate does not name the URL's host"
        }
        if case NIOSSLError.uncleanShutdown = error { return "the service closed the TLS connection without answering" }
        if let error = error as? ChannelError, case .connectTimeout = error { return "no connection within the timeout" }
        let text = "\(error)"
        if text.contains("CERTIFICATE_VERIFY_FAILED") {
            return "the service's certificate is not signed by a trusted CA (--availability-ca-file, or the system's trust store without it)"
        }
        if text.contains("Connection refused") { return "connection refused" }
        if text.contains("WRONG_VERSION_NUMBER") { return "the service does not speak TLS on that port (an http:// service?)" }
        if let reason = text.range(of: #"OPENSSL_internal:[A-Z_]+"#, options: .regularExpression) {
            return "TLS: " + text[reason].dropFirst("OPENSSL_internal:".count).lowercased().replacingOccurrences(of: "_", with: " ")
        }
        // BoringSSL's source paths (the build's .build/checkouts/…) stay out of the log.
        return text.replacingOccurrences(of: #" at /[^ \])]*"#, with: "", options: .regularExpression)
    }

    static func isIPAddress(_ host: String) -> Bool {
        var v4 = in_addr()
        var v6 = in6_addr()
        return inet_pton(AF_INET, host, &v4) == 1 || inet_pton(AF_INET6, host, &v6) == 1
    }
}
