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
    static func open(_ settings: PostgresStoreSettings, eventLoopGroup: any EventLoopGroup, logger: Logger) async throws(AccountStoreError) -> PostgresAccountStore {
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
            do {
                connectionTLS = switch url.sslMode {
                case .disable: .disable
                case .prefer: .prefer(try NIOSSLContext(configuration: makeTLSConfiguration(url, verify: false)))
                default: .require(try NIOSSLContext(configuration: makeTLSConfiguration(url, verify: url.sslMode != .require)))
                }
            } catch {
                throw .unavailable("\(url.redacted): TLS: \(error)\(url.sslRootCert.map { " (sslrootcert \($0))" } ?? "")")
            }
            connection = .init(host: url.host, port: url.port, username: url.user, password: settings.password, database: url.database, tls: connectionTLS)
        }
        let milliseconds = settings.timeout.components.seconds * 1000 + settings.timeout.components.attoseconds / 1_000_000_000_000_000
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
            } catch {
                try? await migrator.close()
                throw error
            }
            try? await migrator.close()
        } catch let error as AccountStoreError {
            throw error
        } catch let error as PSQLError {
            throw .unavailable("\(url.redacted): \(PostgresAccountStore.describe(error))")
        } catch {
            throw .unavailable("\(url.redacted): \(error)")
        }
        logger.info("account store", metadata: ["database": "\(url.redacted)", "poolSize": "\(settings.poolSize)"])
        return PostgresAccountStore(
            client: PostgresClient(configuration: client, eventLoopGroup: eventLoopGroup, backgroundLogger: logger),
            timeout: settings.timeout, logger: logger
        )
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
