#!/usr/bin/env python3
"""Two daemons on two sockets share one database; 100 clients race to sign up the same
10 names. Exactly one signup per name succeeds, everyone else is told "Username already
taken" (by the availability check or, for those who pass it, by the store's unique index).

usage: race_two_daemons.py path/to/signupd
"""
import sys
import threading

from harness import FAST_HASH, Checks, Client, Daemon

checks = Checks("two daemons, one database, 100 racing clients")
binary = sys.argv[1]
first = Daemon(binary, args=FAST_HASH, socket_name="a.sock").start()
second = Daemon(binary, directory=first.directory, database=first.database, args=FAST_HASH, socket_name="b.sock").start()
names = ["racer%d" % i for i in range(10)]
outcomes = []
lock = threading.Lock()
barrier = threading.Barrier(100)


def racer(index):
    daemon = first if index % 2 == 0 else second
    c = Client(daemon.sock, timeout=60)
    name = names[index % 10]
    state = c.fill_signup(name, "password %d" % index)
    barrier.wait()  # everyone submits together
    if state["state"] == "ok":
        result = c.submit_and_wait()
        outcome = ("ok", name) if result.get("ok") else ("taken", result.get("message"))
    else:
        outcome = ("taken", state["message"])
    with lock:
        outcomes.append(outcome)


threads = [threading.Thread(target=racer, args=(i,)) for i in range(100)]
for t in threads:
    t.start()
for t in threads:
    t.join()
try:
    winners = sorted(name for kind, name in outcomes if kind == "ok")
    losers = [message for kind, message in outcomes if kind == "taken"]
    checks.check(len(outcomes) == 100, "every client got an answer")
    checks.check(winners == sorted(names), "exactly one ok per name: %s" % winners)
    checks.check(len(losers) == 90 and all(m == "Username already taken" for m in losers), "the others were told taken: %s" % set(losers))
finally:
    checks.check(first.stop() == 0 and second.stop() == 0, "both daemons exit 0")
checks.done()
