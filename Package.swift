// swift-tools-version:6.1
import PackageDescription

let strict: [SwiftSetting] = [.swiftLanguageMode(.v6)]

/// A library of one of the packages below, by product name.
func nio(_ product: String) -> Target.Dependency { .product(name: product, package: "swift-nio") }
func product(_ product: String, of package: String) -> Target.Dependency { .product(name: product, package: package) }

let package = Package(
    name: "signupd",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "signupd", targets: ["signupd"]),
        .executable(name: "signupctl", targets: ["signupctl"]),
        .library(name: "SignupProtocol", targets: ["SignupProtocol"]),
        // The client: connection, the form view model, reconnect and resume (issue 24).
        .library(name: "SignupClient", targets: ["SignupClient"]),
        // The web bridge: the sign-up page and a WebSocket for browsers (issue 25).
        .executable(name: "signupd-web", targets: ["signupd-web"]),
        // libphonenumber behind a C shim, opened by the daemon when it first checks a phone
        // number (CPhoneLibrary), not loaded at every start: installed in ../lib/signupd beside
        // signupd, or beside it in a build directory (issue 29, the cold start).
        .library(name: "signupd-phone", type: .dynamic, targets: ["CPhoneNumber"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.3"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        // The PostgreSQL account store (several hosts, one database); brings NIOSSL.
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        // https availability URLs: postgres-nio's own TLS package, named so that the daemon
        // may import it (the same checkout and version; nothing new is fetched).
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        // Metrics (issue 26): swift-metrics is already built for postgres-nio; swift-prometheus
        // adds one small module (its other dependency, swift-atomics, is built already).
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
    ],
    targets: [
        // libsystemd (Debian: libsystemd-dev): sd_listen_fds, sd_notify, sd_journal_sendv.
        // Opened at its first use (csystemd.c), not linked: its load and its six libraries'
        // were 0.6-0.8 ms of every cold start, before the first `hello` needed any (issue 29).
        .target(name: "CSystemd", linkerSettings: [.linkedLibrary("dl")]),
        // libsodium (Debian: libsodium-dev): Argon2id password hashing, CSPRNG, SHA-256.
        .systemLibrary(name: "CSodium", pkgConfig: "libsodium", providers: [.apt(["libsodium-dev"])]),

        // libpwquality (Debian: libpwquality-dev; dictionary checks need cracklib-runtime's
        // dictionary): the system's own password policy, /etc/security/pwquality.conf.
        .systemLibrary(name: "CPWQuality", pkgConfig: "pwquality", providers: [.apt(["libpwquality-dev"])]),

        // ICU (Debian: libicu-dev): NFKC_Casefold, UTS #39 skeletons and restriction levels.
        // A C target, not a system library: Debian's ICU exports versioned symbols
        // (uspoof_open_72) behind header macros Swift cannot import; cicu.c calls them.
        // ICU is opened at first use (cicu.c), not linked: its load was ~0.7 ms of every cold start.
        .target(name: "CICU", linkerSettings: [.linkedLibrary("dl")]),
        // Google's libphonenumber is C++: a C shim of its own (SwiftPM keeps C++ and Swift in
        // separate targets) parses and validates phone numbers for the daemon. It is built
        // only into the signupd-phone library (above), which the daemon opens with
        // CPhoneLibrary; that target also holds the shim's header, signupd_phone.h. Linked
        // as C++ alone: no Swift start-up object, and the static runtime's archives (of
        // which nothing is used, so nothing is taken), so that it needs no Swift runtime
        // where it is installed and brings no second one into signupd.
        .target(
            name: "CPhoneNumber", dependencies: ["CPhoneLibrary"], publicHeadersPath: ".",
            linkerSettings: [.linkedLibrary("phonenumber"), .linkedLibrary("stdc++"), .unsafeFlags(["-nostartfiles", "-static-stdlib", "-no-toolchain-stdlib-rpath"])]
        ),
        .target(name: "CPhoneLibrary", linkerSettings: [.linkedLibrary("dl")]),
        // The username rule and identity (display name, key, skeleton), in one place.
        .target(name: "UsernameIdentity", dependencies: ["CICU"], swiftSettings: strict),

        // errno text, whole writes and Unix socket addresses, for the daemon, signupctl and
        // the tests (SignupProtocol stays free of system calls).
        .target(name: "UnixIO", swiftSettings: strict),
        // "Did you mean …?" for signupctl's commands and signupd's options: one rule for both
        // command lines, which share no other module it would belong in.
        .target(name: "CommandLineHints", swiftSettings: strict),
        // Wire types and the NDJSON codec: no dependencies, usable by any Swift client.
        .target(name: "SignupProtocol", path: "Sources/Protocol", swiftSettings: strict),
        // The client library: SignupConnection (async, SwiftNIO), SignupForm (the view model,
        // also @Observable) and the blocking connection command-line tools poll. Never the
        // daemon, GRDB or PostgresNIO.
        .target(
            name: "SignupClient",
            dependencies: ["SignupProtocol", "UnixIO", nio("NIOCore"), nio("NIOPosix"), nio("NIOConcurrencyHelpers")],
            swiftSettings: strict
        ),
        // The built-in forms and message catalogues, as text in the operators' file formats.
        .target(name: "BuiltinForms", swiftSettings: strict),
        // The pure form state machine (no I/O, no clock) and the form/catalogue file readers:
        // shared by the daemon, tests and the fuzzer.
        .target(name: "FormEngine", dependencies: ["SignupProtocol", "BuiltinForms"], swiftSettings: strict),

        // The daemon: everything but its `@main` entry, so that tests can drive it in process.
        // Its files stay in Sources/SignupDaemon; Main/ holds the executable's entry alone.
        .target(
            name: "SignupDaemonCore",
            dependencies: [
                "SignupProtocol", "FormEngine", "UsernameIdentity", "UnixIO", "CommandLineHints", "CSystemd", "CSodium", "CPWQuality", "CPhoneLibrary",
                nio("NIOCore"), nio("NIOPosix"), nio("NIOHTTP1"), nio("NIOConcurrencyHelpers"),
                // No swift-argument-parser: its reflection was 3.3 ms of every cold start
                // (Config/CommandLine/; issue 29). signupctl and signupd-web keep it.
                product("Logging", of: "swift-log"),
                product("ServiceLifecycle", of: "swift-service-lifecycle"),
                // SIGHUP (reload) as an async sequence.
                product("UnixSignals", of: "swift-service-lifecycle"),
                product("GRDB", of: "GRDB.swift"),
                product("PostgresNIO", of: "postgres-nio"),
                // https availability URLs; already built for postgres-nio, no new package.
                product("NIOSSL", of: "swift-nio-ssl"),
                // The counters and histograms operators scrape (Metrics/).
                product("CoreMetrics", of: "swift-metrics"),
                product("Prometheus", of: "swift-prometheus"),
            ],
            path: "Sources/SignupDaemon",
            exclude: ["Main"],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "signupd",
            dependencies: ["SignupDaemonCore"],
            path: "Sources/SignupDaemon/Main",
            exclude: ["signupd.exports"],
            swiftSettings: strict,
            // The release build starts faster (issue 29, the cold start; BENCHMARKS.md): lld
            // packs the 142,000 relative relocations of the position-independent executable
            // (DT_RELR, glibc 2.36), and nothing but `main` is exported (signupd.exports).
            linkerSettings: [
                .unsafeFlags(
                    ["-use-ld=lld", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs", "-Xlinker", "--version-script=\(Context.packageDirectory)/Sources/SignupDaemon/Main/signupd.exports"],
                    .when(configuration: .release)
                )
            ]
        ),
        .executableTarget(
            name: "signupctl",
            dependencies: [
                "SignupProtocol", "SignupClient", "UnixIO", "CommandLineHints",
                product("ArgumentParser", of: "swift-argument-parser"),
            ],
            swiftSettings: strict
        ),

        // The web bridge, a trusted front end built on SignupClient: pages, the no-script
        // POST path, a WebSocket relay and the login cookie. HTTP and WebSocket come from
        // SwiftNIO itself (NIOHTTP1, NIOWebSocket): socket activation needs a listening
        // descriptor from systemd, which Hummingbird 2.28 cannot take, and no new package
        // is built. Its files stay in Sources/SignupWeb; Main/ holds the entry alone.
        .target(
            name: "SignupWebCore",
            dependencies: [
                "SignupProtocol", "SignupClient", "UnixIO", "CSystemd",
                nio("NIOCore"), nio("NIOPosix"), nio("NIOHTTP1"), nio("NIOWebSocket"), nio("NIOConcurrencyHelpers"),
                product("ArgumentParser", of: "swift-argument-parser"),
                product("Logging", of: "swift-log"),
            ],
            path: "Sources/SignupWeb",
            exclude: ["Main"],
            // The page's script and style, as written, compiled into the binary.
            resources: [.embedInCode("Static/app.js"), .embedInCode("Static/app.css")],
            swiftSettings: strict
        ),
        .executableTarget(name: "signupd-web", dependencies: ["SignupWebCore"], path: "Sources/SignupWeb/Main", swiftSettings: strict),

        .testTarget(name: "ProtocolTests", dependencies: ["SignupProtocol"], swiftSettings: strict),
        .testTarget(name: "FormEngineTests", dependencies: ["FormEngine", "BuiltinForms"], swiftSettings: strict),
        .testTarget(name: "UsernameIdentityTests", dependencies: ["UsernameIdentity", "FormEngine"], swiftSettings: strict),
        // GRDB and libsodium only to write a database as the previous schema did (migration
        // test); ICU (CICU) only to apply describe's username rules as a client would.
        .testTarget(
            name: "DaemonTests",
            dependencies: ["SignupProtocol", "SignupClient", "UnixIO", "CSodium", "CICU", product("GRDB", of: "GRDB.swift"), nio("NIOCore"), nio("NIOPosix")],
            // Fixtures/: files the tests read by path (a frozen v1 database schema).
            exclude: ["Fixtures"],
            swiftSettings: strict
        ),
        // The daemon in process: the connection handler on NIO's testing channel, with
        // virtual time, the in-memory store and SQLite on a temporary file. No sockets,
        // no processes, no sleeps.
        .testTarget(
            name: "DaemonCoreTests",
            dependencies: [
                "SignupDaemonCore", "SignupProtocol", "FormEngine", "UsernameIdentity",
                nio("NIOCore"), nio("NIOEmbedded"), nio("NIOPosix"),
                product("Logging", of: "swift-log"),
                // The registry, to check what the per-loop histogram renders against it.
                product("Prometheus", of: "swift-prometheus"),
            ],
            swiftSettings: strict
        ),
        // The client library's pure parts: the form state's rules and the connection core.
        .testTarget(name: "SignupClientTests", dependencies: ["SignupClient"], swiftSettings: strict),
        // signupctl's pure parts: key decoding, field editing, screen layout, argument order.
        .testTarget(name: "SignupctlTests", dependencies: ["signupctl"], swiftSettings: strict),
        // The web bridge's pure parts: cookies, form bodies, addresses, the relay's rules, pages.
        .testTarget(name: "SignupWebTests", dependencies: ["SignupWebCore", "SignupProtocol", "SignupClient", nio("NIOCore")], swiftSettings: strict),
    ]
)
