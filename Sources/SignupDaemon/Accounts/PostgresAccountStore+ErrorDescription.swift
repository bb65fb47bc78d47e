import Foundation
import PostgresNIO

/// Errors in words for logs and the wire: never a statement's bound values, never a build path.
extension PostgresAccountStore {
    /// The server's SQLSTATE and message, never the statement's bound values.
    static func describe(_ error: PSQLError, endpoint: String? = nil) -> String {
        if let info = error.serverInfo {
            return "PostgreSQL error \(info[.sqlState] ?? "?"): \(info[.message] ?? "unknown")"
        }
        if let endpoint, let underlying = error.underlying, "\(underlying)".contains("Connection refused") {
            return "connection refused by \(endpoint)"
        }
        // A server shutting down closes its connections before it refuses new ones.
        if error.code == .serverClosedConnection || error.code == .clientClosedConnection {
            return "the connection to \(endpoint ?? "PostgreSQL") was closed (the server stopped or restarted)"
        }
        // Connection and TLS failures: what the socket or the certificate check said;
        // PSQLError's own text is a placeholder, so it is never quoted.
        if let underlying = error.underlying, !(underlying is PSQLError) {
            return "PostgreSQL \(error.code): \(describeTLS(underlying))"
        }
        return "PostgreSQL \(error.code)"
    }

    /// A TLS or socket error in words, without BoringSSL's source paths (the build's
    /// `.build/checkouts/…` must never reach an administrator's log).
    static func describeTLS(_ error: any Error) -> String {
        let text = "\(error)"
        if text.contains("CERTIFICATE_VERIFY_FAILED") {
            return "the server's certificate is not signed by a trusted CA (sslrootcert, or the system's trust store without it)"
        }
        if text.contains("failedToValidateHostname") {
            return "the server's certificate does not name the host"
        }
        if text.contains("Connection refused") { return "connection refused" }
        if text.contains("noSuchFilesystemObject") { return "the CA file does not exist" }
        if text.contains("NO_CERTIFICATE_OR_CRL_FOUND") { return "the CA file holds no PEM certificate" }
        if let reason = text.range(of: #"OPENSSL_internal:[A-Z_]+"#, options: .regularExpression) {
            return "TLS: " + text[reason].dropFirst("OPENSSL_internal:".count).lowercased().replacingOccurrences(of: "_", with: " ")
        }
        return text.replacingOccurrences(of: #" at /[^ \])]*"#, with: "", options: .regularExpression)
    }
}
