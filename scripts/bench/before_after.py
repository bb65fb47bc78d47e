#!/usr/bin/env python3
"""The hot path before and after a change, in one run: the anchor (ndjson-echo), signupd
BEFORE and signupd AFTER are driven by the same load generator with the same options,
alternating anchor, before, after in every round; medians and each one's ratio to the
anchor of the same round. Release builds only (scripts/bench.sh builds AFTER as it does).

AFTER may be given extra arguments (e.g. `--after-args "--metrics-socket {work}/m.sock"`);
with `--scrape SECONDS` a scraper reads AFTER's metrics socket that often during its loads,
as Prometheus would.

usage: before_after.py --before BIN --after BIN --echo ndjson-echo --load ndjson-load
                       [--rounds 5] [--duration 3] [--after-args ARGS] [--scrape 1]
"""
import argparse
import os
import re
import shlex
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

p = argparse.ArgumentParser()
p.add_argument("--before", required=True)
p.add_argument("--after", required=True)
p.add_argument("--echo", required=True)
p.add_argument("--load", required=True)
p.add_argument("--rounds", type=int, default=5)
p.add_argument("--duration", type=float, default=3)
p.add_argument("--after-args", default="")
p.add_argument("--scrape", type=float, default=0)
args = p.parse_args()
work = tempfile.mkdtemp(prefix="signupd-ba-")
from bench_args import FAST_ARGS  # the per-uid budgets lifted (bench_args.py)


def wait_connectable(path, timeout=30):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            s = socket.socket(socket.AF_UNIX)
            s.connect(path)
            s.recv(1)
            s.close()
            return
        except OSError:
            time.sleep(0.02)  # polling for the daemon's socket to answer
    raise RuntimeError("nothing answers on " + path)


def start(kind):
    sock = os.path.join(work, "%s-%d.sock" % (kind, time.monotonic_ns()))
    if kind == "anchor":
        argv = [args.echo, sock]
    else:
        extra = shlex.split(args.after_args.replace("{work}", work)) if kind == "after" else []
        argv = [getattr(args, kind), "--socket", sock, "--database", os.path.join(work, "%s.sqlite" % kind), "--log-level", "error"] + FAST_ARGS + extra
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_connectable(sock)
    return proc, sock


def scraper(path, stop):
    while not stop.wait(args.scrape):
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
                s.connect(path)
                s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                while s.recv(65536):
                    pass
        except OSError:
            pass


def load(sock, options):
    out = subprocess.run([args.load, "-s", sock] + [str(x) for x in options], capture_output=True, text=True, timeout=600).stdout
    return {k: float(v) for k, v in re.findall(r"(\w+)=([\d.]+)", out)}


LOADS = [
    ("1 client, `set` round trip, p50 (µs)", "p50_us", ["-c", 1, "-d", args.duration]),
    ("1 client, `set` round trip, p99 (µs)", "p99_us", ["-c", 1, "-d", args.duration]),
    ("100 clients, 1 in flight, requests/s", "rps", ["-c", 100, "-d", args.duration]),
    ("100 clients, 8 in flight, requests/s", "rps", ["-c", 100, "-p", 8, "-d", args.duration]),
]


def main():
    results = {}  # (load, kind) -> [values]
    ratios = {}
    daemons = {kind: start(kind) for kind in ("anchor", "before", "after")}
    metrics = re.search(r"--metrics-socket\s+(\S+)", args.after_args.replace("{work}", work))
    stop = threading.Event()
    if args.scrape and metrics:
        threading.Thread(target=scraper, args=(metrics.group(1), stop), daemon=True).start()
    try:
        for round_number in range(args.rounds):
            seen = set()
            for name, key, options in LOADS:
                signature = tuple(options)
                for kind in ("anchor", "before", "after"):
                    # The p50 and p99 rows share one load per daemon and round.
                    if (signature, kind) not in seen:
                        seen.add((signature, kind))
                        measured = load(daemons[kind][1], options)
                        results.setdefault((signature, kind), []).append(measured)
                    print("round %d %-40s %-6s %s" % (round_number + 1, name, kind, results[(signature, kind)][-1].get(key)), file=sys.stderr, flush=True)
    finally:
        stop.set()
        for proc, _ in daemons.values():
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=60)
        shutil.rmtree(work, ignore_errors=True)
    print("| measure | anchor | before | after | before ÷ anchor | after ÷ anchor | after ÷ before |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, key, options in LOADS:
        signature = tuple(options)
        med = {kind: statistics.median(r[key] for r in results[(signature, kind)]) for kind in ("anchor", "before", "after")}
        # Per round ratios to that round's anchor, then the median of them.
        per = {kind: statistics.median(b[key] / a[key] for a, b in zip(results[(signature, "anchor")], results[(signature, kind)])) for kind in ("before", "after")}
        print("| %s | %s | %s | %s | %.2f | %.2f | %.3f |" % (
            name, fmt(med["anchor"]), fmt(med["before"]), fmt(med["after"]), per["before"], per["after"], med["after"] / med["before"]))


def fmt(value):
    return "{:,.0f}".format(value) if value >= 100 else "%.1f" % value


if __name__ == "__main__":
    main()
