#!/usr/bin/env bash
# Heap allocations per `set` -> `validation` round trip in a release signupd: counts
# allocations (LD_PRELOAD shim) across a one-client ndjson-load run and divides by the
# requests it completed. Run scripts/bench.sh once first (it builds the tools).
#   scripts/bench/allocations.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
tools=.build/bench-tools
cc -O2 -shared -fPIC -o "$tools/malloc_count.so" scripts/bench/malloc_count.c
BIN=$(swift build -c release --static-swift-stdlib --disable-local-rpath --toolset scripts/release-toolset.json --scratch-path .build-static --show-bin-path)/signupd
dir=$(mktemp -d)
LD_PRELOAD="$PWD/$tools/malloc_count.so" "$BIN" --socket "$dir/s.sock" --database :memory: --log-level error 2>"$dir/counts" &
pid=$!
trap 'kill $pid 2>/dev/null; rm -rf "$dir"' EXIT
until [ -S "$dir/s.sock" ]; do sleep 0.05; done
"$tools/ndjson-load" -s "$dir/s.sock" -c 1 -d 1 >/dev/null   # warm up
kill -USR2 $pid; sleep 0.2
run=$("$tools/ndjson-load" -s "$dir/s.sock" -c 1 -d 3)
kill -USR2 $pid; sleep 0.2
requests=$(echo "$run" | grep -o 'requests=[0-9]*' | cut -d= -f2)
before=$(sed -n 1p "$dir/counts" | cut -d= -f2); after=$(sed -n 2p "$dir/counts" | cut -d= -f2)
echo "$run"
awk -v a="$after" -v b="$before" -v r="$requests" 'BEGIN { printf "allocations per set->validation round trip: %.2f (%d allocations / %d requests)\n", (a-b)/r, a-b, r }'
