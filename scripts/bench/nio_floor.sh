#!/usr/bin/env bash
# NIO's floor beside the anchor and signupd (scripts/bench/nio_floor.py; BENCHMARKS.md):
# builds nio-floor (a separate package: SwiftNIO alone), epoll-floor (a transport without
# NIO: scripts/bench/epoll_floor.sh) and signupd in release, as
# scripts/bench.sh does, and runs the comparison. Run scripts/bench.sh once first (it
# builds ndjson-echo and ndjson-load).
#   scripts/bench/nio_floor.sh [--rounds N] [--duration S]
set -euo pipefail
cd "$(dirname "$0")/../.."
tools=.build/bench-tools
[ -x "$tools/ndjson-load" ] || { echo "run scripts/bench.sh first (it builds $tools)" >&2; exit 2; }
floor=$(cd scripts/bench/nio-floor && swift build -c release >&2 && swift build -c release --show-bin-path)/nio-floor
epoll=$(scripts/bench/epoll_floor.sh)
swift build -c release --static-swift-stdlib --disable-local-rpath --toolset scripts/release-toolset.json --scratch-path .build-static --product signupd >&2
signupd=$(swift build -c release --static-swift-stdlib --disable-local-rpath --toolset scripts/release-toolset.json --scratch-path .build-static --show-bin-path)/signupd
exec python3 scripts/bench/nio_floor.py --signupd "$signupd" --echo "$tools/ndjson-echo" --floor "$floor" --epoll "$epoll" --load "$tools/ndjson-load" "$@"
