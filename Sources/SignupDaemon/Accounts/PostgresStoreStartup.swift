import FormEngine
import Logging
import NIOCore
import PostgresNIO

/// What `--database postgresql://…` and the PostgreSQL options resolve to.
struct PostgresStoreSettings: Sendable {
    var url: PostgresURL
    /// From a file or systemd credential; never logged.
    var password: String?
    var poolSize: Int
    var timeout: Duration
}

/// Opens the PostgreSQL store: migrates the schema on a connection of its own (under the
/// advisory lock), then returns the store on a pool the caller runs as a service.
enum PostgresStoreStartup {
    static func open(_ settings: PostgresStoreSettings, eventLoopGroup: any EventLoopGroup, logger daemonLogger: Logger) async throws(AccountStoreError) -> PostgresAccountStore {
        // postgres-nio logs the SCRAM exchange (nonces, salt, proof) at trace: it never gets
        // a logger more verbose than debug, whatever --log-level says.
        var logger = daemonLogger
        if logger.logLevel < .debug { logger.logLevel = .debug }
        let url = settings.url
        let tls = makeTLS(url)
        var client: PostgresClient.Configuration
        var connection: PostgresConnection.Configuration
        if url.isUnixSocket {
            client = .init(unixSocketPath: url.unixSocketPath, username: url.user, password: settings.password, database: url.database)
            connection = .init(unixSocketPath: url.unixSocketPath, username: url.user, password: settings.password, database: url.database)
        } else {
            client = .init(host: url.host, port: url.port, username: url.user, password: settings.password, database: url.database, tls: tls)
            let connectionTLS: PostgresConnection.Configuration.TLS
            var verifyingContext: NIOSSLContext?
            do {
                switch url.sslMode {
                case .disable: connectionTLS = .disable
                case .prefer: connectionTLS = .prefer(try NIOSSLContext(configuration: makeTLSConfiguration(url, verify: false)))
                default:
                    let context = try NIOSSLContext(configuration: makeTLSConfiguration(url, verify: url.sslMode != .require))
                    verifyingContext = context
                    connectionTLS = .require(context)
                }
            } catch {
                throw .unavailable("\(url.redacted): TLS: \(PostgresAccountStore.describeTLS(error))\(url.sslRootCert.map { " (sslrootcert \($0))" } ?? "")")
            }
            connection = .init(host: url.host, port: url.port, username: url.user, password: settings.password, database: url.database, tls: connectionTLS)
            if url.sslMode == .verifyFull, let context = verifyingContext {
                try await checkServerName(url, context: context, eventLoop: eventLoopGroup.any(), timeout: settings.timeout)
            }
        }
        let milliseconds = settings.timeout.nanoseconds / 1_000_000
        // A hung server or a blocked lock must not pin sessions busy: the server gives up too.
        client.options.additionalStartupParameters = [("statement_timeout", "\(milliseconds)"), ("application_name", "signupd")]
        client.options.maximumConnections = settings.poolSize
        client.options.connectTimeout = settings.timeout
        connection.options.additionalStartupParameters = [("application_name", "signupd migrations")]
        connection.options.connectTimeout = .milliseconds(Int64(milliseconds))

        do {
            let migrator = try await PostgresConnection.connect(on: eventLoopGroup.any(), configuration: connection, id: 0, logger: logger)
            do {
                try await PostgresAccountStore.migrate(migrator, logger: logger)
                // A pool larger than the server allows would fail its last connections later,
                // under load: say so now.
                var limit = 0
                for try await value in try await migrator.query("SELECT current_setting('max_connections')::int - current_setting('superuser_reserved_connections')::int", logger: logger).decode(Int.self) {
                    limit = value
                }
                if settings.poolSize > limit {
                    logger.warning("--database-pool-size \(settings.poolSize) is more than the server's max_connections allows (\(limit) besides superuser-reserved ones, shared by every host): connections past it will be refused", metadata: ["database": "\(url.redacted)"])
                }
            } catch {
                try? await migrator.close()
                throw error
            }
            try? await migrator.close()
        } catch let error as AccountStoreError {
            throw error
        } catch let error as PSQLError where error.code == .authMechanismRequiresPassword {
            throw .unavailable("\(url.redacted): the server asks for a password and none was given: put it in a file given by --database-password-file, or in a systemd credential named \(PostgresOptions.credentialName) (LoadCredential=); PGPASSWORD is deliberately not read (a process's environment is too easily exposed)")
        } catch let error as PSQLError {
            throw .unavailable("\(url.redacted): \(PostgresAccountStore.describe(error, endpoint: url.isUnixSocket ? url.unixSocketPath : "\(url.host):\(url.port)"))")
        } catch {
            throw .unavailable("\(url.redacted): \(error)")
        }
        logger.info("account store", metadata: ["database": "\(url.redacted)", "poolSize": "\(settings.poolSize)"])
        return PostgresAccountStore(
            client: PostgresClient(configuration: client, eventLoopGroup: eventLoopGroup, backgroundLogger: logger),
            timeout: settings.timeout, probe: PostgresProbe(url: url, timeout: settings.timeout), timers: eventLoopGroup,
            logger: logger
        )
    }

    /// verify-full: the certificate must name the URL's host (libpq's rule, see
    /// `PostgresServerName`), checked on a connection of its own before any other.
    private static func checkServerName(_ url: PostgresURL, context: NIOSSLContext, eventLoop: any EventLoop, timeout: Duration) async throws(AccountStoreError) {
        let certificate: NIOSSLCertificate
        do {
            certificate = try await PostgresServerName.serverCertificate(
                host: url.host, port: url.port, context: context, eventLoop: eventLoop, timeout: .nanoseconds(timeout.nanoseconds)
            )
        } catch {
            throw .unavailable("\(url.redacted): TLS: \(PostgresAccountStore.describeTLS(error))")
        }
        guard PostgresServerName.matches(certificate, host: url.host) else {
            throw .unavailable("\(url.redacted): TLS: the server's certificate does not name \(url.host) (sslmode=verify-full checks the host name written in the URL against the certificate's subjectAltName)")
        }
    }

    private static func makeTLS(_ url: PostgresURL) -> PostgresClient.Configuration.TLS {
        switch url.sslMode {
        case .disable: .disable
        case .prefer: .prefer(makeTLSConfiguration(url, verify: false))
        case .require: .require(makeTLSConfiguration(url, verify: false))
        case .verifyCA, .verifyFull: .require(makeTLSConfiguration(url, verify: true))
        }
    }

    /// libpq's meanings: `prefer` and `require` encrypt without checking the certificate,
    /// `verify-ca` checks it against the CA file (or the system's trust store), `verify-full`
    /// the host name too.
    static func makeTLSConfiguration(_ url: PostgresURL, verify: Bool) -> TLSConfiguration {
        var tls = TLSConfiguration.makeClientConfiguration()
        if !verify {
            tls.certificateVerification = .none
            return tls
        }
        tls.certificateVerification = url.sslMode == .verifyFull ? .fullVerification : .noHostnameVerification
        if let root = url.sslRootCert {
            tls.trustRoots = .file(root)
        }
        return tls
    }
}
