#!/bin/bash
# The cold start of several signupd builds, alternated: each start is socket-activated
# (systemd-socket-activate, as the bench's cold-start row), the client connects at once and
# times connect -> hello (ndjson-load --cold); the daemon's own `startup=` stages are read
# from its `serving` line. Prints the medians per build, then each stage's median.
#
# usage: scripts/bench/coldcmp.sh N BINARY...   (release builds; BENCHMARKS.md)
#        LOADER=path/to/ndjson-load (default: the one scripts/bench.sh builds)
set -eu
N=$1; shift
LOADER=${LOADER:-$(dirname "$0")/../../.build/bench-tools/ndjson-load}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
# A database that exists, as after the first start.
"$1" --socket "$WORK/init.sock" --database "$WORK/db.sqlite" --idle-exit 1 --log-level error &
wait $!
for i in $(seq 1 "$N"); do
  for b in "$@"; do
    tag=$(basename "$b")-$(echo "$b" | md5sum | cut -c1-6)
    rm -f "$WORK/c.sock"
    systemd-socket-activate -l "$WORK/c.sock" "$b" --database "$WORK/db.sqlite" --log-level info --idle-exit 1 2> "$WORK/$tag-$i.log" &
    for _ in $(seq 100); do [ -S "$WORK/c.sock" ] && break; sleep 0.01; done
    cold=$("$LOADER" -s "$WORK/c.sock" --cold | grep -o 'cold_us=[0-9]*' | cut -d= -f2)
    wait $!  # the daemon exits by itself (--idle-exit 1)
    echo "$tag $cold" >> "$WORK/cold.txt"
  done
done
python3 - "$WORK" "$@" <<'PY'
import collections, glob, hashlib, os, re, statistics, sys
work, binaries = sys.argv[1], sys.argv[2:]
rows = [line.split() for line in open(os.path.join(work, "cold.txt"))]
for b in binaries:
    tag = "%s-%s" % (os.path.basename(b), hashlib.md5((b + "\n").encode()).hexdigest()[:6])
    cold = [int(r[1]) / 1000 for r in rows if r[0] == tag]
    stages = collections.defaultdict(list)
    for f in glob.glob(os.path.join(work, tag + "-*.log")):
        m = re.search(r"startup=\"?([0-9.]+) ms: (.*?)[\"\[]", open(f).read())
        if not m:
            continue
        stages["startup"].append(float(m.group(1)))
        for part in m.group(2).strip().split(", "):
            name, value = part.rsplit(" ", 2)[0], part.rsplit(" ", 2)[1]
            stages[name].append(float(value))
    print("%s: connect -> hello median %.2f ms, min %.2f ms (%d starts)" % (b, statistics.median(cold), min(cold), len(cold)))
    print("  " + ", ".join("%s %.2f" % (k, statistics.median(v)) for k, v in stages.items()))
PY
