#!/usr/bin/env python3
"""The bench's cold-start row alone (issue 29), alternated: the anchor (ndjson-echo) and
signupd each socket-activated by systemd-socket-activate with `--log-level error`, as
scripts/bench/run.py's `cold` starts them, one after the other N times; prints both medians
and their ratio. Release builds; the tools from ../shared/bench built by scripts/bench.sh.

usage: scripts/bench/coldratio.py SIGNUPD N
"""
import atexit
import shutil
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time

tools = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".build", "bench-tools")
echo, load = os.path.join(tools, "ndjson-echo"), os.path.join(tools, "ndjson-load")
signupd, rounds = sys.argv[1], int(sys.argv[2])
work = tempfile.mkdtemp()
atexit.register(shutil.rmtree, work, ignore_errors=True)  # removed when the run ends
db = os.path.join(work, "cold.sqlite")
# A database that exists, as after the first start.
subprocess.run([signupd, "--socket", os.path.join(work, "init.sock"), "--database", db, "--idle-exit", "1", "--log-level", "error"], check=True)
times = {"anchor": [], "signupd": []}
for _ in range(rounds):
    for kind in times:
        sock = os.path.join(work, "cold-%d.sock" % time.monotonic_ns())
        command = [echo, "--listen-fds"] if kind == "anchor" else [signupd, "--database", db, "--log-level", "error"]
        activator = subprocess.Popen(["systemd-socket-activate", "-l", sock] + command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        while not os.path.exists(sock):
            time.sleep(0.005)
        out = subprocess.run([load, "-s", sock, "--cold"], capture_output=True, text=True).stdout
        times[kind].append(int(out.split("cold_us=")[1].split()[0]) / 1000)
        activator.send_signal(signal.SIGTERM)
        activator.wait()
anchor, daemon = statistics.median(times["anchor"]), statistics.median(times["signupd"])
print("anchor %.2f ms, signupd %.2f ms, ratio %.2f (%d alternated)" % (anchor, daemon, daemon / anchor, rounds))
