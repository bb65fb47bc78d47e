#!/usr/bin/env bash
# The benchmark: builds signupd in release mode and the anchor tools from ../shared/bench,
# then measures both side by side (scripts/bench/run.py) and prints a Markdown report.
#   scripts/bench.sh                 # full run, about 6 minutes
#   ROUNDS=1 DURATION=2 SEED=100000 scripts/bench.sh   # a quick look
#   DEB=dist/signupd_0.1.0_amd64.deb scripts/bench.sh   # also the restart rows, through systemd
#                                    # in a booted sandbox (scripts/bench/restart.sh; root)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
BENCH_SRC=${BENCH_SRC:-../shared/bench}
[ -f "$BENCH_SRC/ndjson-load.c" ] || { echo "the anchor sources are not at $BENCH_SRC (set BENCH_SRC)" >&2; exit 1; }
# Statically linked Swift runtime and the release toolset, as README.md's install and the
# package build it (debian/rules says why): a third faster start, and a fifth.
release=(swift build -c release --static-swift-stdlib --disable-local-rpath --toolset scripts/release-toolset.json --scratch-path .build-static)
"${release[@]}" --product signupd >&2
"${release[@]}" --product signupd-phone >&2
tools=.build/bench-tools
mkdir -p "$tools"
cc -O2 -Wall -o "$tools/ndjson-echo" "$BENCH_SRC/ndjson-echo.c"
cc -O2 -Wall -o "$tools/ndjson-load" "$BENCH_SRC/ndjson-load.c"
cc -O2 -Wall -o "$tools/argon2-rate" "$BENCH_SRC/argon2-rate.c" -lsodium -lpthread
exec python3 scripts/bench/run.py --signupd "$("${release[@]}" --show-bin-path)/signupd" \
  --echo "$tools/ndjson-echo" --load "$tools/ndjson-load" --argon2 "$tools/argon2-rate" \
  --rounds "${ROUNDS:-3}" --duration "${DURATION:-5}" --seed-accounts "${SEED:-1000000}" --plot docs/latency-curve.svg \
  --memory-return Tests/robustness/memory_return.py ${DEB:+--deb "$DEB"}
