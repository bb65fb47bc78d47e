#!/usr/bin/env python3
"""SIGTERM while 20 signups are hashing (slow Argon2id): every one completes and is
answered with its result, then `bye`; the daemon exits 0 and all 20 accounts exist.

usage: sigterm_under_load.py path/to/signupd
"""
import signal
import sqlite3
import sys
import threading

from harness import SLOW_HASH, Checks, Client, Daemon

checks = Checks("SIGTERM under load")
daemon = Daemon(sys.argv[1], args=SLOW_HASH + ["--hash-concurrency", "2"]).start()
clients = [Client(daemon.sock, timeout=120) for _ in range(20)]
for i, c in enumerate(clients):
    state = c.fill_signup("term%d" % i, "password %d" % i)
    assert state["state"] == "ok", state
for c in clients:
    c.send("submit")
for c in clients:
    c.until(lambda m: m.get("event") == "busy" and m["value"] is True)
daemon.signal(signal.SIGTERM)
results = []
for c in clients:
    result, _ = c.until(lambda m: m.get("event") == "result")
    bye, _ = c.until(lambda m: m.get("event") == "bye")
    results.append((result["ok"], bye["reason"]))
checks.check(all(ok for ok, _ in results), "every in-flight signup succeeded: %s" % results)
checks.check(all(reason == "shutdown" for _, reason in results), "every client got bye")
checks.check(daemon.wait() == 0, "exit 0")
count = sqlite3.connect(daemon.database).execute("SELECT count(*) FROM account WHERE username LIKE 'term%'").fetchone()[0]
checks.check(count == 20, "all 20 accounts stored, found %d" % count)
checks.done()
