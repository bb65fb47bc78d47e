#!/usr/bin/env python3
"""The store's threads are shared per peer (issue 27, item 5): one uid (`nobody`) floods
`verify` from many connections, each with a request always in flight, while root's form
checks usernames one at a time. Root's availability answers under the flood must stay
within 4x + 3 ms of its idle figures measured in the same run (the trial before the fix:
0.8 -> 22 ms on SQLite). The figures are printed (ROBUSTNESS.md).

usage: store_fairness.py path/to/signupd [--long] [--postgres]   (root only; uses setpriv)
  default: 64 flooding connections, 60 checks each phase; --long: 400 connections, 300 checks
  --postgres: against the PostgreSQL server scripts/with-postgres.sh starts
  (SIGNUPD_TEST_POSTGRES_URL, _PASSWORD_FILE), in a database of its own (the trial before
  the fix: 1.4 -> 108 ms), within 4x + 10 ms; skipped when no server is given
"""
import json
import os
import socket
import statistics
import subprocess
import sys
import time

from harness import FAST_HASH, Checks, Daemon, as_uid

if os.geteuid() != 0:
    print("SKIP: needs root to run the flood as another user")
    sys.exit(0)
long_run = "--long" in sys.argv
FLOODERS = 400 if long_run else 64
CHECKS = 300 if long_run else 60
checks = Checks("store shared per peer" + (" (PostgreSQL)" if "--postgres" in sys.argv else ""))
store_args = []
database = None
if "--postgres" in sys.argv:
    url, password_file = os.environ.get("SIGNUPD_TEST_POSTGRES_URL"), os.environ.get("SIGNUPD_TEST_POSTGRES_PASSWORD_FILE")
    if not url or not password_file:
        print("SKIP: --postgres without a server (run under scripts/with-postgres.sh)")
        sys.exit(0)
    # A database of its own: accounts other tests made do not change what verify finds.
    name = "store_fairness_%d" % os.getpid()
    password = open(password_file).read().strip()
    subprocess.run(["psql", "-X", "-q", url, "-c", "CREATE DATABASE %s" % name], check=True, env={"PGPASSWORD": password, "PATH": "/usr/bin:/bin"})
    database = url.replace("/postgres?", "/%s?" % name)
    store_args = ["--database-password-file", password_file]
daemon = Daemon(sys.argv[1], database=database, args=FAST_HASH + store_args + ["--socket-mode", "0666", "--max-connections-per-user", str(FLOODERS + 8),
                                                "--availability-checks-per-second", "100000", "--availability-checks-per-session-per-second", "100000"]).start()
os.chmod(daemon.directory, 0o711)

FLOOD = r'''
import selectors, socket, sys
path, count = sys.argv[1], int(sys.argv[2])
token = b"A" * 43
request = b'{"op":"verify","token":"%s"}\n' % token
sel = selectors.DefaultSelector()
for _ in range(count):
    s = socket.socket(socket.AF_UNIX); s.connect(path); s.setblocking(False)
    sel.register(s, selectors.EVENT_READ)
    s.sendall(request)
print("flooding", flush=True)
answered = 0
try:
    while True:
        for key, _ in sel.select():
            data = key.fileobj.recv(65536)
            if not data:
                sys.exit(0)
            for _ in range(data.count(b"\n")):
                answered += 1
                key.fileobj.sendall(request)
except OSError:  # the daemon stopped first
    pass
'''


def availability_latencies(tag):
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(30)
    s.connect(daemon.sock)
    reader = s.makefile("rb")
    reader.readline()
    s.sendall(b'{"op":"open","form":"signup","id":"o"}\n{"op":"ping","id":"p"}\n')
    while json.loads(reader.readline()).get("id") != "p":
        pass
    times = []
    for index in range(CHECKS):
        name = "%s%04d" % (tag, index)
        started = time.monotonic()
        s.sendall(json.dumps({"op": "set", "field": "username", "value": name}).encode() + b"\n")
        while True:
            message = json.loads(reader.readline())
            if message.get("event") == "validation" and message.get("field") == "username" and message.get("state") in ("ok", "failed"):
                break
        times.append((time.monotonic() - started) * 1000)
    reader.close()
    s.close()
    times.sort()
    return statistics.median(times), times[int(len(times) * 0.9) - 1]


try:
    idle = availability_latencies("idle")
    flood = subprocess.Popen(as_uid(65534, [sys.executable, "-c", FLOOD, daemon.sock, str(FLOODERS)]), stdout=subprocess.PIPE, text=True)
    checks.check(flood.stdout.readline().strip() == "flooding", "the flood started")
    loaded = availability_latencies("busy")
    flood.kill()
    flood.wait()
    print("  root's availability checks: idle p50 %.2f ms p90 %.2f ms; while nobody floods verify from %d connections p50 %.2f ms p90 %.2f ms"
          % (idle[0], idle[1], FLOODERS, loaded[0], loaded[1]))
    # PostgreSQL: each check is a network round trip through the pool, and a debug build
    # (the test command's) spends several ms of its own per call under load: 10 ms of
    # slack there (the trial before the fix: 1.4 -> 108 ms), 3 ms on SQLite.
    slack = 10 if "--postgres" in sys.argv else 3
    checks.check(loaded[0] <= idle[0] * 4 + slack, "root's median check stays within 4x + %d ms of idle: %.2f vs %.2f ms" % (slack, loaded[0], idle[0]))
finally:
    status = daemon.stop()
    if status != 0:
        print("  the daemon's log ends:\n" + "\n".join(daemon.log().splitlines()[-400:]))
    checks.check(status == 0, "daemon exits 0 (it exited %s)" % status)
checks.done()
