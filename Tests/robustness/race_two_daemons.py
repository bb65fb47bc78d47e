#!/usr/bin/env python3
"""Two daemons on two sockets share one database; 100 clients race to sign up the same
10 names. Exactly one signup per name succeeds, everyone else is told "Username already
taken" (by the availability check or, for those who pass it, by the store's unique index).

usage: race_two_daemons.py path/to/signupd
"""
import sys

from harness import FAST_HASH, Checks, Client, Daemon, race_signups

checks = Checks("two daemons, one database, 100 racing clients")
binary = sys.argv[1]
first = Daemon(binary, args=FAST_HASH, socket_name="a.sock").start()
second = Daemon(binary, directory=first.directory, database=first.database, args=FAST_HASH, socket_name="b.sock").start()
names = ["racer%d" % i for i in range(10)]
# Connected one after another; the race is the submits.
clients = [Client((first if index % 2 == 0 else second).sock, timeout=60) for index in range(100)]
outcomes = race_signups(clients, names, lambda index: "password %d" % index)
try:
    winners = sorted(name for kind, name in outcomes if kind == "ok")
    losers = [message for kind, message in outcomes if kind == "refused"]
    checks.check(len(outcomes) == 100, "every client got an answer")
    checks.check(winners == sorted(names), "exactly one ok per name: %s" % winners)
    checks.check(len(losers) == 90 and all(m == "Username already taken" for m in losers), "the others were told taken: %s" % set(losers))
finally:
    checks.check(first.stop() == 0 and second.stop() == 0, "both daemons exit 0")
checks.done()
