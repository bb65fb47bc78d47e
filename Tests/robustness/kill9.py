#!/usr/bin/env python3
"""kill -9 at random moments during a stream of signups, restarting each time. Every
signup answered ok must be in the store; no account is half-written; the database passes
`PRAGMA integrity_check`.

usage: kill9.py path/to/signupd [KILLS]   (default 200)
"""
import random
import signal
import sqlite3
import sys
import threading
import time

from harness import FAST_HASH, Checks, Client, Daemon

binary = sys.argv[1]
kills = int(sys.argv[2]) if len(sys.argv) > 2 else 200
checks = Checks("kill -9 during signups (%d kills)" % kills)
first = Daemon(binary, args=FAST_HASH)
acknowledged = set()
attempted = 0
lock = threading.Lock()
rng = random.Random(20261122)


def stream(daemon, worker, stop):
    """Signs up fresh names until the daemon dies under it."""
    global attempted
    n = 0
    try:
        c = Client(daemon.sock, timeout=10)
        while not stop.is_set():
            n += 1
            name = "k%dw%dn%d" % (run, worker, n)
            c.open("signup")
            c.send("set", field="username", value=name)
            c.send("set", field="password", value="password")
            c.send("set", field="repeatedPassword", value="password")
            c.until(lambda m: m.get("event") == "enabled" and m["value"])
            c.send("submit")
            with lock:
                attempted += 1
            result, _ = c.until(lambda m: m.get("event") == "result")
            if result["ok"]:
                with lock:
                    acknowledged.add(name)
            c.send("close")
    except (EOFError, OSError, ValueError):
        pass  # the daemon was killed


for run in range(kills):
    daemon = Daemon(binary, directory=first.directory, database=first.database, args=FAST_HASH).start()
    stop = threading.Event()
    workers = [threading.Thread(target=stream, args=(daemon, w, stop)) for w in range(4)]
    for w in workers:
        w.start()
    time.sleep(rng.uniform(0.005, 0.15))  # the random moment of the kill
    daemon.signal(signal.SIGKILL)
    daemon.wait()
    stop.set()
    for w in workers:
        w.join()

db = sqlite3.connect(first.database)
stored = {row[0]: row for row in db.execute("SELECT username, identityKey, passwordHash FROM account")}
missing = acknowledged - stored.keys()
checks.check(len(acknowledged) > kills, "signups were acknowledged between kills (%d)" % len(acknowledged))
checks.check(not missing, "every acknowledged signup is stored; missing: %s" % sorted(missing)[:5])
half = [r for r in stored.values() if r[1] != r[0].lower() or not r[2].startswith("$argon2id$")]
checks.check(not half, "no half-written account: %s" % half[:3])
checks.check(db.execute("PRAGMA integrity_check").fetchone()[0] == "ok", "integrity_check ok")
print("kills=%d attempted=%d acknowledged=%d stored=%d" % (kills, attempted, len(acknowledged), len(stored)))
checks.done()
