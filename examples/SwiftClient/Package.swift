// swift-tools-version:6.1
import PackageDescription

// A Swift program that uses signupd through the SignupClient library, depending on this
// repository by path as an app would depend on it by URL:
//   .package(url: "https://…/signupd.git", from: "0.1.0") → .product(name: "SignupClient", package: "signupd")
let package = Package(
    name: "SwiftClient",
    platforms: [.macOS(.v14)],
    dependencies: [
        // Named: a path dependency is otherwise known by its folder's name, which a clone chooses.
        .package(name: "signupd", path: "../.."),
    ],
    targets: [
        .executableTarget(
            name: "signup-example",
            dependencies: [.product(name: "SignupClient", package: "signupd")],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
    ]
)
