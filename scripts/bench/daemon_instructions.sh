#!/usr/bin/env bash
# The daemon's own instructions a request under the bench's load, counted by valgrind's
# callgrind: a count, not a time, so two builds compare on a busy machine too (this one has
# no hardware counters for perf). The daemon runs under callgrind with the bench's budgets
# lifted (bench_args.py); ndjson-load warms it for 4 s, the counters are zeroed, then 10 s
# of load are counted and divided by the requests answered. Kernel time is not counted.
#   scripts/bench/daemon_instructions.sh [--top N] [BIN] [-- ndjson-load args]
#   default BIN: the release build scripts/bench.sh makes; default load: -c 100 -p 8
# Needs valgrind (apt-get install valgrind) and the bench tools (run scripts/bench.sh once).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
top=0
if [ "${1:-}" = --top ]; then top=$2; shift 2; fi
bin=
if [ $# -gt 0 ] && [ "$1" != -- ]; then bin=$1; shift; fi
[ "${1:-}" = -- ] && shift
[ $# -gt 0 ] || set -- -c 100 -p 8
command -v valgrind >/dev/null || { echo "valgrind is needed: apt-get install valgrind" >&2; exit 2; }
load=$root/.build/bench-tools/ndjson-load
[ -x "$load" ] || { echo "run scripts/bench.sh first (it builds $load)" >&2; exit 2; }
if [ -z "$bin" ]; then
  (cd "$root" && swift build -c release --static-swift-stdlib --disable-local-rpath --toolset scripts/release-toolset.json --scratch-path .build-static --product signupd >&2)
  bin=$root/.build-static/release/signupd
fi
work=$(mktemp -d)
trap 'kill "$daemon" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT
# valgrind 3.19 cannot read the DWARF 5 of the static build: a copy without it, with its
# symbols (and the phone library beside it, where the daemon looks for it).
strip --strip-debug -o "$work/signupd" "$bin"
[ -e "$(dirname "$bin")/libsignupd-phone.so" ] && cp "$(dirname "$bin")/libsignupd-phone.so" "$work/"
read -r -a fast < <(cd "$root/scripts/bench" && python3 -c 'from bench_args import FAST_ARGS; print(" ".join(FAST_ARGS))')
valgrind --tool=callgrind --callgrind-out-file="$work/out" "$work/signupd" --socket "$work/s.sock" \
  --database "$work/d.sqlite" --log-level error "${fast[@]}" > "$work/valgrind.log" 2>&1 &
daemon=$!
for _ in $(seq 600); do [ -S "$work/s.sock" ] && break; sleep 0.1; done
[ -S "$work/s.sock" ] || { cat "$work/valgrind.log" >&2; exit 1; }
"$load" -s "$work/s.sock" "$@" -d 4 > /dev/null
callgrind_control -z "$daemon" > /dev/null 2>&1
"$load" -s "$work/s.sock" "$@" -d 10 > "$work/load"
callgrind_control -d "$daemon" > /dev/null 2>&1
requests=$(grep -o 'requests=[0-9]*' "$work/load" | cut -d= -f2)
dump=$(ls -t "$work"/out.* | head -1)
total=$(callgrind_annotate "$dump" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}')
echo "load: $* ($(grep -o 'rps=[0-9]*' "$work/load") under callgrind); requests=$requests"
echo "instructions a request: $((total / requests))"
if [ "$top" -gt 0 ]; then
  echo "by function (its own instructions a request):"
  # Without the totals and the threads' entry points (whole-run lines, at 99 %).
  callgrind_annotate --inclusive=no --threshold=100 "$dump" 2>/dev/null | grep -E '^\s*[0-9,]+ \(\s*[0-9]\.|^\s*[0-9,]+ \(\s*[1-4][0-9]\.' | sed -n "1,${top}p" |
    awk -v n="$requests" '{c = $1; gsub(",", "", c); $1 = ""; $2 = ""; printf "%7.0f %s\n", c / n, substr($0, 1, 160)}'
fi
