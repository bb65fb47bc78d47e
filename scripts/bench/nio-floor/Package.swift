// swift-tools-version:6.1
// The least a SwiftNIO server does per NDJSON request, as a reference between the anchor
// (ndjson-echo: C, one thread on epoll) and signupd (BENCHMARKS.md, "NIO's floor").
// Built by scripts/bench/nio_floor.sh; not part of signupd.
import PackageDescription

let package = Package(
    name: "nio-floor",
    dependencies: [.package(url: "https://github.com/apple/swift-nio.git", from: "2.101.3")],
    targets: [
        .executableTarget(
            name: "nio-floor",
            dependencies: [.product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio")],
            swiftSettings: [.swiftLanguageMode(.v6)]
        )
    ]
)
