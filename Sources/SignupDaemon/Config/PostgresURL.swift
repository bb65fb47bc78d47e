import struct Foundation.URLComponents

/// Where and how to reach PostgreSQL, from `--database postgresql://…` and libpq's
/// environment variables (`PGHOST`, `PGPORT`, `PGUSER`, `PGDATABASE`, `PGSSLMODE`,
/// `PGSSLROOTCERT`) for what the URL leaves out. The password never comes from here: see
/// `PostgresOptions.password()`.
struct PostgresURL: Sendable, Equatable {
    /// libpq's `sslmode`, without `allow` (treated as `prefer`).
    enum SSLMode: String, Sendable, Equatable {
        case disable, prefer, require
        case verifyCA = "verify-ca"
        case verifyFull = "verify-full"
    }

    /// A host name or address (TCP), or a directory holding `.s.PGSQL.<port>` (Unix socket).
    var host: String
    var port: Int
    var user: String
    var database: String
    var sslMode: SSLMode
    /// CA certificates (PEM) to verify the server with; nil: the system's trust store.
    var sslRootCert: String?

    var isUnixSocket: Bool { host.hasPrefix("/") }
    var unixSocketPath: String { "\(host)/.s.PGSQL.\(port)" }

    /// Whether `--database` names PostgreSQL rather than an SQLite path: a URL's scheme is
    /// read in any case (RFC 3986), and `postgresql:/…` is a URL with a fault to name, not a
    /// path to echo (helper-42: a path's errors repeat it, password and all).
    static func isPostgres(_ database: String) -> Bool {
        let lowered = database.lowercased()
        return lowered.hasPrefix("postgresql:") || lowered.hasPrefix("postgres:")
    }

    /// Why `--database` cannot be an SQLite path although it is not a PostgreSQL URL: it
    /// looks like a URL of another kind (`pgsql://…`, ` postgresql://…`), which may hold a
    /// password that a path's errors would repeat. Names only the scheme.
    static func refusalOfOtherURL(_ database: String) -> String? {
        if let separator = database.range(of: "://") {
            let scheme = database[..<separator.lowerBound]
            return "--database \"\(scheme.prefix(32))://…\" is not a URL signupd reads: a PostgreSQL store is postgresql://user@host:port/database, an SQLite one a path"
        }
        // `postgres//u:password@h/db`, `u:password@h/db`: a URL without its `://` would be
        // an SQLite path whose errors repeat it (helper-43). A path holding "@" is refused.
        if database.contains("@") {
            return "--database: an SQLite path holding \"@\" is refused and not repeated here, in case it is a PostgreSQL URL missing its \"://\" (with a password in it); a PostgreSQL store is postgresql://user@host:port/database"
        }
        return nil
    }

    /// Why a `--database` URL cannot be used. The text is shown to the administrator.
    struct Invalid: Error, CustomStringConvertible {
        var description: String
    }

    /// Parses `url`; `environment` stands for `getenv` (libpq's variables).
    init(_ url: String, environment: (String) -> String?) throws(Invalid) {
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(), scheme == "postgresql" || scheme == "postgres",
            components.host != nil || url.dropFirst(scheme.count).hasPrefix("://")
        else {
            throw Invalid(description: "not a postgresql:// URL; the form is postgresql://user@host:port/database?sslmode=require")
        }
        if components.password != nil {
            throw Invalid(description: "a password in the URL would be visible to every user in the process list; put it in a file given by --database-password-file, or a systemd credential named database-password (LoadCredential=)")
        }
        var query: [String: String] = [:]
        for item in components.queryItems ?? [] {
            guard let value = item.value else { throw Invalid(description: "the URL parameter \(item.name) has no value") }
            // libpq takes the last; a URL saying two things about TLS is a mistake to name.
            if query[item.name] != nil { throw Invalid(description: "the URL parameter \(item.name) is given twice") }
            query[item.name] = value
        }
        for name in query.keys where !["sslmode", "sslrootcert", "host", "port", "user", "dbname"].contains(name) {
            throw Invalid(description: "unsupported URL parameter \(name) (supported: sslmode, sslrootcert, host, port, user, dbname)")
        }
        func nonEmpty(_ value: String?) -> String? { value.flatMap { $0.isEmpty ? nil : $0 } }
        host = nonEmpty(query["host"]) ?? nonEmpty(components.host) ?? nonEmpty(environment("PGHOST")) ?? "/var/run/postgresql"
        let portText = nonEmpty(query["port"]) ?? components.port.map(String.init) ?? nonEmpty(environment("PGPORT")) ?? "5432"
        // The values are not repeated: a password typed in the wrong place is still one.
        guard let port = Int(portText), (1...65535).contains(port) else { throw Invalid(description: "the port is not a number from 1 to 65535") }
        self.port = port
        guard let user = nonEmpty(query["user"]) ?? nonEmpty(components.user) ?? nonEmpty(environment("PGUSER")) else {
            throw Invalid(description: "no user: give it in the URL (postgresql://user@host/database) or in PGUSER")
        }
        // "u%3Apassword@…" decodes to a user holding a colon: a password by another spelling.
        guard !user.contains(":") else {
            throw Invalid(description: "a user name holding \":\" reads as user:password; put the password in a file given by --database-password-file, or a systemd credential named database-password (LoadCredential=)")
        }
        self.user = user
        let path = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
        database = nonEmpty(query["dbname"]) ?? nonEmpty(path) ?? nonEmpty(environment("PGDATABASE")) ?? user
        let modeText = nonEmpty(query["sslmode"]) ?? nonEmpty(environment("PGSSLMODE")) ?? "prefer"
        guard let mode = SSLMode(rawValue: modeText == "allow" ? "prefer" : modeText) else {
            throw Invalid(description: "sslmode is not one of disable, allow, prefer, require, verify-ca, verify-full")
        }
        sslRootCert = nonEmpty(query["sslrootcert"]) ?? nonEmpty(environment("PGSSLROOTCERT"))
        // libpq: with a root CA file, `require` verifies the chain as `verify-ca` does.
        sslMode = mode == .require && sslRootCert != nil ? .verifyCA : mode
        if isUnixSocket && (mode == .require || mode == .verifyCA || mode == .verifyFull) {
            throw Invalid(description: "sslmode \(modeText) needs a TCP host; \(host) is a Unix socket directory")
        }
    }

    /// The URL without secrets, for logs (there are none in it: passwords are refused).
    var redacted: String {
        "postgresql://\(user)@\(isUnixSocket ? "[\(host)]" : host):\(port)/\(database)?sslmode=\(sslMode.rawValue)"
    }
}
