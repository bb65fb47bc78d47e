#!/usr/bin/env python3
"""signupd's benchmark, side by side with the cheapest possible NDJSON daemon (the anchor,
../shared/bench/ndjson-echo), driven by the same load generator with the same options,
back to back, for several rounds. Prints a Markdown report with medians and ratios.

Run through scripts/bench.sh, which builds everything in release mode first.
"""
import argparse
import atexit
import os
import platform
import re
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
p.add_argument("--signupd", required=True)
p.add_argument("--echo", required=True)
p.add_argument("--load", required=True)
p.add_argument("--rounds", type=int, default=3)
p.add_argument("--duration", type=float, default=5)
p.add_argument("--seed-accounts", type=int, default=1_000_000)
p.add_argument("--cold-runs", type=int, default=15)
p.add_argument("--argon2", help="../shared/bench/argon2-rate, built: the hashing anchor (issue 29)")
p.add_argument("--plot", help="write the latency curve as SVG here")
p.add_argument("--deb", help="the package (scripts/build-deb.sh): adds the restart rows, through systemd in a booted sandbox (scripts/bench/restart.sh)")
p.add_argument("--memory-return", help="Tests/robustness/memory_return.py: adds the row of RSS after a flood")
args = p.parse_args()
HERE = os.path.dirname(os.path.abspath(__file__))
work = tempfile.mkdtemp(prefix="signupd-bench-")
# Its sockets and databases (a million accounts: some 230 MB) go when the run ends, however.
atexit.register(shutil.rmtree, work, ignore_errors=True)
from bench_args import FAST_ARGS  # the per-uid budgets lifted (bench_args.py)


def log(*a):
    print(*a, file=sys.stderr, flush=True)


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
            time.sleep(0.02)
    raise RuntimeError("nothing answers on " + path)


class Daemon:
    def __init__(self, kind, db=None, extra=()):
        self.kind = kind
        self.sock = os.path.join(work, "%s-%d.sock" % (kind, time.monotonic_ns()))
        if kind == "anchor":
            self.proc = subprocess.Popen([args.echo, self.sock], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        else:
            db = db or os.path.join(work, "db-%d.sqlite" % time.monotonic_ns())
            self.proc = subprocess.Popen([args.signupd, "--socket", self.sock, "--database", db, "--log-level", "error"] + FAST_ARGS + list(extra),
                                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_connectable(self.sock)

    def rss_kib(self):
        with open("/proc/%d/status" % self.proc.pid) as f:
            return int(re.search(r"VmRSS:\s+(\d+)", f.read()).group(1))

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def load(sock, *extra):
    out = subprocess.run([args.load, "-s", sock] + [str(x) for x in extra], capture_output=True, text=True, timeout=600).stdout
    return {k: float(v) for k, v in re.findall(r"(\w+)=([0-9.]+)", out)}


def median(xs):
    return statistics.median(xs) if xs else float("nan")


rows = []


def row(measure, anchor, signupd, unit, target, better="lower"):
    ratio = signupd / anchor if anchor else float("nan")
    rows.append((measure, anchor, signupd, unit, ratio, target))
    log("%-60s anchor=%s signupd=%s ratio=%.2f" % (measure, anchor, signupd, ratio))


def side_by_side(measure, key, options, unit, target, rounds=None):
    """Anchor then signupd, same options, each round; medians of each."""
    results = {"anchor": [], "signupd": []}
    daemons = {kind: Daemon(kind) for kind in results}
    try:
        for _ in range(rounds or args.rounds):
            for kind in ("anchor", "signupd"):
                r = load(daemons[kind].sock, *options)
                if r.get("errors", 0):
                    log("errors in", measure, kind, r)
                results[kind].append(r[key])
    finally:
        for d in daemons.values():
            d.stop()
    row(measure, median(results["anchor"]), median(results["signupd"]), unit, target)
    return results


D = args.duration
side_by_side("1 client, `set` → `validation` round trip, p50", "p50_us", ["-c", 1, "-d", D], "µs", "≤ 2×")
side_by_side("100 clients, 1 in flight each, requests/s", "rps", ["-c", 100, "-d", D], "req/s", "≥ 0.6×")
side_by_side("100 clients, 8 in flight each, requests/s", "rps", ["-c", 100, "-p", 8, "-d", D], "req/s", "≥ 0.7×")

# Latency curve: one round each, p50 and p99.
curve = []
for n in (1, 10, 100, 1000, 10000):
    point = {}
    for kind in ("anchor", "signupd"):
        d = Daemon(kind)
        try:
            r = load(d.sock, "-c", n, "-d", D)
            point[kind] = (r.get("p50_us"), r.get("p99_us"), r.get("rps"))
        finally:
            d.stop()
    curve.append((n, point))
    log("curve", n, point)
# What a person typing among others waits for (issue 29): the curve's p99 at 100 and 1,000.
for n, point in curve:
    if n in (100, 1000):
        row("%s sessions typing at once: `set` round trip p99 (one round)" % format(n, ","), point["anchor"][1], point["signupd"][1], "µs", "≤ 1.5×")


# Memory of 10,000 idle open sessions, one per connection.
def held_memory(kind):
    d = Daemon(kind)
    try:
        base = d.rss_kib()
        holder = subprocess.Popen([args.load, "-s", d.sock, "--hold", "-c", "10000", "-d", "10"], stdout=subprocess.PIPE, text=True)
        line = holder.stdout.readline()
        assert line.startswith("ready"), line
        full = d.rss_kib()
        # Every held session must still answer a ping: a fresh one proves the daemon is live,
        # and the holder reports errors for any of its connections that broke.
        rest = holder.stdout.read()
        holder.wait()
        errors = int(re.search(r"errors=(\d+)", rest).group(1))
        return (full - base) * 1024 / 10000, errors
    finally:
        d.stop()


mem = {kind: held_memory(kind) for kind in ("anchor", "signupd")}
rows.append(("10,000 idle open sessions: memory per session", mem["anchor"][0] / 1024, mem["signupd"][0] / 1024, "KiB",
             mem["signupd"][0] / mem["anchor"][0] if mem["anchor"][0] else float("nan"), "≤ 16 KiB each"))
log("memory", mem)


def held_sessions(count, per_connection):
    """signupd's resident set growth per session with `count` idle signup sessions open,
    `per_connection` on each connection (a process may hold 20,000 descriptors here, so
    100,000 sessions take 10 a connection); every connection answers a ping after its opens."""
    d = Daemon("signupd", extra=["--max-session-bytes", str(64 << 30)])
    held = []
    try:
        base = d.rss_kib()
        batch = b"".join(b'{"op":"open","form":"signup"}\n' for _ in range(per_connection)) + b'{"op":"ping","id":"held"}\n'
        for _ in range(count // per_connection):
            s = socket.socket(socket.AF_UNIX)
            s.connect(d.sock)
            s.sendall(batch)
            held.append(s)
        for s in held:
            reader = s.makefile("rb")
            while b'"pong"' not in (line := reader.readline()):
                assert line and b'"error"' not in line, line
        return (d.rss_kib() - base) * 1024 / count
    finally:
        for s in held:
            s.close()
        d.stop()


per_session_100k = held_sessions(100000, 10)
rows.append(("100,000 idle open sessions (10 a connection): memory per session (no anchor)", float("nan"), per_session_100k / 1024, "KiB",
             float("nan"), "≤ 8 KiB each"))
log("memory 100k", per_session_100k)


# Cold start under socket activation: connect to a not-yet-running daemon → hello.
def cold(kind):
    times = []
    db = os.path.join(work, "cold.sqlite")
    for _ in range(args.cold_runs):
        sock = os.path.join(work, "cold-%d.sock" % time.monotonic_ns())
        if kind == "anchor":
            cmd = ["systemd-socket-activate", "-l", sock, args.echo, "--listen-fds"]
        else:
            cmd = ["systemd-socket-activate", "-l", sock, args.signupd, "--database", db, "--log-level", "error"]
        act = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        while not os.path.exists(sock):
            time.sleep(0.005)
        r = load(sock, "--cold")
        times.append(r["cold_us"] / 1000)
        act.send_signal(signal.SIGTERM)
        act.wait()
    return median(times)


row("cold start: connect to a socket-activated, not-yet-running daemon → `hello`, median", cold("anchor"), cold("signupd"), "ms", "≤ 8×")

# Availability check with 1,000,000 accounts vs none.
avail_opts = ["--set-a", '{"op":"set","field":"username","value":"freeNameA"}', "--set-b", '{"op":"set","field":"username","value":"freeNameB"}',
              "--match", "Username available"]
empty_db = os.path.join(work, "empty.sqlite")
full_db = os.path.join(work, "full.sqlite")
Daemon("signupd", db=full_db).stop()  # creates the schema
log(subprocess.run([sys.executable, os.path.join(HERE, "seed_accounts.py"), full_db, str(args.seed_accounts)], capture_output=True, text=True).stdout.strip())
avail = {}
for name, db in (("none", empty_db), ("full", full_db)):
    d = Daemon("signupd", db=db)
    try:
        avail[name] = [load(d.sock, "-c", 1, "-d", D, *avail_opts) for _ in range(args.rounds)]
    finally:
        d.stop()
a_none = median([r["p50_us"] for r in avail["none"]])
a_full = median([r["p50_us"] for r in avail["full"]])
rows.append(("availability check round trip p50, %d accounts vs none" % args.seed_accounts, a_none, a_full, "µs", a_full / a_none, "≤ 1.5×"))

# Keystroke latency while 32 signups hash (default Argon2id), and signups/logins per second.
d = Daemon("signupd", extra=[])
try:
    anchor_d = Daemon("anchor")
    quiet = load(anchor_d.sock, "-c", 1, "-d", D)
    anchor_d.stop()
    bg = subprocess.Popen([sys.executable, os.path.join(HERE, "form_load.py"), d.sock, "signup", "32", str(D + 6)], stdout=subprocess.PIPE, text=True)
    time.sleep(3)  # let the 32 signups get going before measuring keystrokes
    busy = load(d.sock, "-c", 1, "-d", D)
    signups = bg.communicate()[0].strip()
    logins = subprocess.run([sys.executable, os.path.join(HERE, "form_load.py"), d.sock, "login", "32", str(D + 6)], capture_output=True, text=True).stdout.strip()
finally:
    d.stop()
# Hashing alone (issue 29): libsodium's Argon2id at signupd's default cost on both cores,
# then signupd's signups and logins with nothing else running, each a fresh daemon, and the
# ratio. (The figures above are taken while keystrokes share the cores.)
if args.argon2:
    def per_sec(line):
        return float(re.search(r"per_sec=([0-9.]+)", line).group(1))
    alone = {}
    for kind in ("signup", "login"):
        rates = []
        for _ in range(args.rounds):
            limit = subprocess.run([args.argon2, "-t", str(os.cpu_count()), "-o", "2", "-m", "65536", "-d", str(D)],
                                   capture_output=True, text=True, check=True).stdout.strip()
            d = Daemon("signupd", extra=[])
            try:
                done = subprocess.run([sys.executable, os.path.join(HERE, "form_load.py"), d.sock, kind, "32", str(D + 3)],
                                      capture_output=True, text=True).stdout.strip()
            finally:
                d.stop()
            rates.append((per_sec(limit), per_sec(done)))
            log(limit, done)
        anchor, own = median([a for a, _ in rates]), median([o for _, o in rates])
        alone[kind] = (anchor, own)
        rows.append(("%ss per second alone (32 at once) vs libsodium's Argon2id alone on every core, same cost" % kind,
                     anchor, own, "/s", own / anchor, "≥ 0.95×"))
rows.append(("keystroke round trip p99 while 32 signups hash their passwords", quiet["p99_us"] / 1000, busy["p99_us"] / 1000, "ms",
             busy["p99_us"] / quiet["p99_us"], "≤ 16 ms"))
log(signups, logins, busy)

# Memory after a flood (issue 29): 1,024 connections x 16 signup sessions with long values,
# all closed; the resident set before the flood, and after it once it settled.
if args.memory_return:
    out = subprocess.run([sys.executable, args.memory_return, args.signupd, "--long"], capture_output=True, text=True).stdout
    flood = re.search(r"RSS before the flood (\d+) KiB.*after it (\d+) KiB", out)
    if flood:
        before_kib, after_kib = int(flood.group(1)), int(flood.group(2))
        rows.append(("resident set after a 1,024 × 16-session flood ended (anchor column: before it)", before_kib / 1024, after_kib / 1024, "MiB",
                     after_kib / before_kib, "≤ 1.2×"))
    else:
        log("memory_return.py printed no figures:", out)

# Restart through systemd (issue 29): median of 3 rounds per size, restart → first answered keystroke.
if args.deb:
    out = subprocess.run(["bash", os.path.join(HERE, "restart.sh"), args.deb, "1000", "10000"], capture_output=True, text=True).stdout
    log(out)
    for n, goal in ((1000, "≤ 0.2 s"), (10000, "≤ 1 s")):
        taken = [float(m) for m in re.findall(r"restart n=%d round=\d+: bench: .*first keystroke answered ([0-9.]+) s" % n, out)]
        if taken:
            rows.append(("restart with %s open sessions through systemd → first answered keystroke, median (no anchor)" % format(n, ","),
                         float("nan"), median(taken), "s", float("nan"), goal))

if args.plot:
    sys.path.insert(0, HERE)
    from plot import latency_svg
    latency_svg(curve, args.plot)

# Report.
cpu = re.search(r"model name\s*:\s*(.*)", open("/proc/cpuinfo").read())
mem_total = re.search(r"MemTotal:\s+(\d+)", open("/proc/meminfo").read()).group(1)
print("Machine: %s, %d cores, %.0f GiB, Linux %s. Rounds: %d × %.0f s. Anchor: ndjson-echo; load: ndjson-load." % (
    cpu.group(1) if cpu else platform.processor(), os.cpu_count(), int(mem_total) / 1048576, platform.release(), args.rounds, D))
print()
print("| measure | anchor | signupd | unit | signupd ÷ anchor | target |")
print("|---|---:|---:|---|---:|---|")
fmt = lambda x: "—" if x != x else ("%.0f" % x) if x >= 100 else ("%.2f" % x)
for measure, a, s, unit, ratio, target in rows:
    print("| %s | %s | %s | %s | %s | %s |" % (measure, fmt(a), fmt(s), unit, "—" if ratio != ratio else "%.2f" % ratio, target))
print()
print("Signups and logins with the default Argon2id cost (2 passes, 64 MiB), 32 at once:")
print()
print("    " + signups)
print("    " + logins)
print()
print("Latency curve (one round each): p50 / p99 in µs, and requests/s.")
print()
print("| sessions | anchor p50 | anchor p99 | anchor req/s | signupd p50 | signupd p99 | signupd req/s |")
print("|---:|---:|---:|---:|---:|---:|---:|")
for n, point in curve:
    a, s = point["anchor"], point["signupd"]
    print("| %d | %s | %s | %s | %s | %s | %s |" % (n, fmt(a[0]), fmt(a[1]), fmt(a[2]), fmt(s[0]), fmt(s[1]), fmt(s[2])))
print()
if args.plot:
    # The plot as BENCHMARKS.md links it (issue 29 asks for it there), relative to the repository.
    print("![latency against sessions, both daemons](%s)" % os.path.relpath(os.path.abspath(args.plot), os.path.dirname(os.path.dirname(HERE))))
    print()
print("Memory: anchor %.2f KiB and signupd %.2f KiB per held session; connection errors: anchor %d, signupd %d." % (
    mem["anchor"][0] / 1024, mem["signupd"][0] / 1024, mem["anchor"][1], mem["signupd"][1]))
