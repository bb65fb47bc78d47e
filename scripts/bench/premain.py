#!/usr/bin/env python3
"""The start before main: exec of each signupd binary with a bad flag that ends it at the
top of main (`--phone-library-trial` without its arguments), alternated, wall time.

usage: scripts/bench/premain.py [--runs N] BINARY...   (release builds; BENCHMARKS.md)
"""
import statistics
import subprocess
import sys
import time

args = sys.argv[1:]
runs = 200
if args[:1] == ["--runs"]:
    runs, args = int(args[1]), args[2:]
if not args:
    sys.exit(__doc__)
times = {binary: [] for binary in args}
for _ in range(runs):
    for binary in args:
        started = time.perf_counter()
        subprocess.run([binary, "--phone-library-trial"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times[binary].append((time.perf_counter() - started) * 1000)
for binary in args:
    ordered = sorted(times[binary])
    print("%s: median %.3f ms, p10 %.3f ms (%d runs)" % (binary, statistics.median(ordered), ordered[len(ordered) // 10], runs))
