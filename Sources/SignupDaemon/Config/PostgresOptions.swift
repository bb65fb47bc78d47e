import UnixIO
#if canImport(Glibc)
import Glibc
#endif

/// Options of the PostgreSQL account store (`--database postgresql://…`).
struct PostgresOptions {
    /// Its options: names, help and the field each sets (CommandLineOption).
    static var options: [CommandLineOption<Self>] {
        [
            .option("database-password-file", \.databasePasswordFile, valueName: "path", help: "With --database postgresql://…: file holding the database password (its first line). Default: $CREDENTIALS_DIRECTORY/database-password when systemd passes that credential (LoadCredential=database-password:…), else no password. Never give a password on the command line or in the URL."),
            .option("database-pool-size", \.databasePoolSize, valueName: "n", help: "With --database postgresql://…: connections to PostgreSQL this daemon keeps at most (default: \(DaemonTuning.standard.databasePoolSize))."),
            .option("database-timeout", \.databaseTimeout, valueName: "seconds", help: "With --database postgresql://…: seconds a statement, or waiting for a connection, may take before the request is answered as the store being unavailable (also PostgreSQL's statement_timeout). (default: \(seconds(DaemonTuning.standard.databaseTimeout)))"),
        ]
    }

    var databasePasswordFile: String?
    var databasePoolSize: Int?
    var databaseTimeout: Double?

    func validate() throws {
        if let databasePoolSize { try checkRange("--database-pool-size", databasePoolSize, 1...1000) }
        if let databaseTimeout, !(databaseTimeout >= 0.1 && databaseTimeout <= 600) { throw UsageError("--database-timeout must be between 0.1 and 600 seconds") }
    }

    /// Options that only mean something for PostgreSQL, refused with another store rather
    /// than silently ignored.
    func checkOnlyWithPostgres(database: String?) throws {
        if let database, PostgresURL.isPostgres(database) { return }
        let given = [databasePasswordFile.map { _ in "--database-password-file" }, databasePoolSize.map { _ in "--database-pool-size" }].compactMap { $0 }
        if let first = given.first {
            throw UsageError("\(first) is for a PostgreSQL store (--database postgresql://…); this daemon uses \(database == ":memory:" ? "an in-memory" : "an SQLite") store")
        }
    }

    /// The systemd credential name read when no `--database-password-file` is given.
    static let credentialName = "database-password"

    /// The password, from `--database-password-file` or the systemd credential; nil: none.
    func password() throws(DaemonError) -> String? {
        let path: String
        if let databasePasswordFile {
            path = databasePasswordFile
        } else if let directory = DefaultPaths.environment("CREDENTIALS_DIRECTORY") {
            path = "\(directory)/\(Self.credentialName)"
            if access(path, F_OK) != 0 { return nil }
        } else {
            return nil
        }
        guard let file = fopen(path, "r") else {
            throw .startup("cannot read the database password from \(path): \(UnixIO.errnoText(errno))")
        }
        defer { fclose(file) }
        var status = stat()
        guard fstat(fileno(file), &status) == 0 else {
            throw .startup("cannot read the database password from \(path): \(UnixIO.errnoText(errno))")
        }
        if status.st_mode & S_IFMT == S_IFDIR {
            throw .startup("the database password file \(path) is a directory; give the file holding the password")
        }
        // A secret others can read is not one: refuse, as for the daemon's other private files.
        if status.st_mode & 0o077 != 0 {
            throw .startup("the database password file \(path) is readable or writable by group or others (mode \(String(status.st_mode & 0o777, radix: 8))); make it private: chmod 600 \(path)")
        }
        var bytes: [UInt8] = []
        while bytes.count <= 4096 {
            let c = getc(file)
            if c == EOF || c == 0x0A { break }
            bytes.append(UInt8(truncatingIfNeeded: c))
        }
        if bytes.last == 0x0D { bytes.removeLast() }
        guard bytes.count <= 4096 else { throw .startup("the database password in \(path) is longer than 4096 bytes") }
        return String(decoding: bytes, as: UTF8.self)
    }
}
