#!/usr/bin/env bash
# Builds epoll-floor (scripts/bench/epoll-floor: a transport without SwiftNIO, answering
# fixed lines or doing signupd's keystroke work) in release and prints its path. A package
# of its own under .build/epoll-floor, made from the protocol, form engine and built-in
# forms sources of this tree (linked, not copied) and that folder, as keystroke.sh does.
#   scripts/bench/epoll_floor.sh      then: BIN SOCKET THREADS fixed|engine
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$root/.build/epoll-floor
mkdir -p "$work/Sources/EpollFloor" "$work/Sources/CEpoll/include"
for module in Protocol:SignupProtocol BuiltinForms:BuiltinForms FormEngine:FormEngine; do
  ln -sfn "$root/Sources/${module%%:*}" "$work/Sources/${module##*:}"
done
cp "$root/scripts/bench/epoll-floor/main.swift" "$work/Sources/EpollFloor/main.swift"
cp "$root/scripts/bench/epoll-floor/cepoll.c" "$work/Sources/CEpoll/cepoll.c"
cp "$root/scripts/bench/epoll-floor/cepoll.h" "$work/Sources/CEpoll/include/cepoll.h"
cat > "$work/Package.swift" <<'PACKAGE'
// swift-tools-version:6.1
import PackageDescription
let strict: [SwiftSetting] = [.swiftLanguageMode(.v6)]
let package = Package(
    name: "epoll-floor",
    targets: [
        .target(name: "SignupProtocol", swiftSettings: strict),
        .target(name: "BuiltinForms", swiftSettings: strict),
        .target(name: "FormEngine", dependencies: ["SignupProtocol", "BuiltinForms"], swiftSettings: strict),
        .target(name: "CEpoll"),
        .executableTarget(name: "EpollFloor", dependencies: ["FormEngine", "SignupProtocol", "CEpoll"], swiftSettings: strict),
    ]
)
PACKAGE
cd "$work"
swift build -c release --static-swift-stdlib --product EpollFloor >&2
echo "$(swift build -c release --static-swift-stdlib --show-bin-path)/EpollFloor"
