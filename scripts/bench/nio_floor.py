#!/usr/bin/env python3
"""Where a request's CPU goes: the anchor (ndjson-echo), NIO's floor (nio-floor: a SwiftNIO
server that answers every line with a fixed line, parsing nothing; left to the kernel, and
with its loops pinned as signupd's are), a transport without NIO (epoll-floor: the same fixed
answers from one thread's epoll loop, and signupd's keystroke work — read, form session,
events — on one and on two such threads) and signupd, alternated,
under the bench's throughput load (ndjson-load -c 100, 1 and 8 in flight). For each: requests
a second, and the server's and the load generator's user and system CPU per request, read
from /proc/PID/stat over the middle of each run. Then the bench's tail rows (100 and 1,000
sessions typing at once, 1 in flight each): each server's round trip p50 and p99, and its
p99 against the anchor's. Release builds only (BENCHMARKS.md).

usage: scripts/bench/nio_floor.sh   (builds nio-floor and runs this with the bench's tools)
       scripts/bench/nio_floor.py --signupd BIN --echo BIN --floor BIN --epoll BIN --load BIN [--rounds 3] [--duration 4]
"""
import argparse
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
p.add_argument("--signupd", required=True)
p.add_argument("--echo", required=True)
p.add_argument("--floor", required=True)
p.add_argument("--epoll", required=True)
p.add_argument("--load", required=True)
p.add_argument("--rounds", type=int, default=3)
p.add_argument("--duration", type=float, default=4)
args = p.parse_args()

from bench_args import FAST_ARGS  # the per-uid budgets lifted (bench_args.py)
TICK_NS = 1e9 / os.sysconf("SC_CLK_TCK")
work = tempfile.mkdtemp(prefix="signupd-floor-")


def start(kind, sock):
    if kind == "anchor":
        cmd = [args.echo, sock]
    elif kind.startswith("nio-floor"):
        cmd = [args.floor, sock]
    elif kind.startswith("epoll"):
        cmd = [args.epoll, sock] + EPOLL[kind]
    else:
        cmd = [args.signupd, "--socket", sock, "--database", os.path.join(work, "db-%d.sqlite" % time.monotonic_ns()),
               "--log-level", "error"] + FAST_ARGS
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while True:
        try:
            s = socket.socket(socket.AF_UNIX)
            s.connect(sock)
            s.recv(1)
            s.close()
            if kind == "nio-floor pinned":
                pin_event_loops(proc.pid)
            return proc
        except OSError:
            if time.monotonic() > deadline:
                raise RuntimeError("nothing answers on " + sock)
            time.sleep(0.02)


def pin_event_loops(pid):
    """Each NIO event loop thread on a CPU of its own, as signupd pins its loops by default
    (--pin-event-loops auto); Linux takes a thread id where it takes a pid."""
    cpus = sorted(os.sched_getaffinity(pid))
    loops = sorted(int(t) for t in os.listdir("/proc/%d/task" % pid)
                   if open("/proc/%d/task/%s/comm" % (pid, t)).read().startswith("NIO-ELT"))
    for cpu, tid in zip(cpus, loops):
        os.sched_setaffinity(tid, {cpu})


def cpu(pid):
    """User and system time of a process so far, in clock ticks."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]), int(fields[12])


def measure(kind, depth, conns=100):
    sock = os.path.join(work, "%s-%d.sock" % (kind, time.monotonic_ns()))
    proc = start(kind, sock)
    try:
        base = [args.load, "-s", sock, "-c", str(conns), "-p", str(depth)]
        subprocess.run(base + ["-d", "1"], capture_output=True, check=True)
        loader = subprocess.Popen(base + ["-d", str(args.duration)], stdout=subprocess.PIPE, text=True)
        # The middle of the run: after its connections are made, before it winds down.
        time.sleep(0.5)
        s0, l0, t0 = cpu(proc.pid), cpu(loader.pid), time.monotonic()
        time.sleep(args.duration - 1)
        s1, l1, t1 = cpu(proc.pid), cpu(loader.pid), time.monotonic()
        out = loader.communicate(timeout=60)[0]
        rps = float(re.search(r"rps=([0-9.]+)", out).group(1))
        requests = rps * (t1 - t0)
        per = lambda a, b: (b - a) * TICK_NS / requests
        latency = lambda name: float(re.search(name + r"=([0-9.]+)", out).group(1))
        return {"rps": rps, "user": per(s0[0], s1[0]), "sys": per(s0[1], s1[1]), "load_user": per(l0[0], l1[0]), "load_sys": per(l0[1], l1[1]),
                "p50": latency("p50_us"), "p99": latency("p99_us")}
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)


EPOLL = {"epoll-floor": ["1", "fixed"], "epoll + keystroke": ["1", "engine"], "epoll + keystroke, 2 threads": ["2", "engine"]}
KINDS = ["anchor", "nio-floor", "nio-floor pinned", "epoll-floor", "epoll + keystroke", "epoll + keystroke, 2 threads", "signupd"]
try:
    for depth in (1, 8):
        results = {k: [] for k in KINDS}
        for _ in range(args.rounds):
            for kind in KINDS:
                results[kind].append(measure(kind, depth))
        print("\n100 clients, %d in flight each (%d rounds alternated, medians; CPU in ns per request)\n" % (depth, args.rounds))
        print("| server | requests/s | ÷ anchor | server user | server system | load generator user + system |")
        print("|---|---:|---:|---:|---:|---:|")
        anchor = statistics.median(r["rps"] for r in results["anchor"])
        for kind in KINDS:
            m = lambda key: statistics.median(r[key] for r in results[kind])
            print("| %s | %d | %.2f | %d | %d | %d |" % (kind, m("rps"), m("rps") / anchor, m("user"), m("sys"), m("load_user") + m("load_sys")))
        sys.stdout.flush()
    for conns in (100, 1000):
        results = {k: [] for k in KINDS}
        for _ in range(args.rounds):
            for kind in KINDS:
                results[kind].append(measure(kind, 1, conns))
        print("\n%s sessions typing at once, 1 in flight each (%d rounds alternated, medians; µs)\n" % (format(conns, ","), args.rounds))
        print("| server | requests/s | p50 | p99 | p99 ÷ anchor's |")
        print("|---|---:|---:|---:|---:|")
        anchor = statistics.median(r["p99"] for r in results["anchor"])
        for kind in KINDS:
            m = lambda key: statistics.median(r[key] for r in results[kind])
            print("| %s | %d | %d | %d | %.2f |" % (kind, m("rps"), m("p50"), m("p99"), m("p99") / anchor))
        sys.stdout.flush()
finally:
    shutil.rmtree(work, ignore_errors=True)
