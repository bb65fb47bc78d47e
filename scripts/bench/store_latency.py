#!/usr/bin/env python3
"""Availability-check round trip (`set` of the username → its final validation) on SQLite and
on PostgreSQL, each holding N seeded accounts: p50 and p99 over SAMPLES checks of fresh names,
one client. The PostgreSQL server is a throwaway one (Tests/postgres/pgserver.py) on loopback.

usage: store_latency.py path/to/signupd [N=1000000] [SAMPLES=2000]
"""
import atexit
import shutil
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "..", "Tests", "robustness"))
sys.path.insert(0, os.path.join(here, "..", "..", "Tests", "postgres"))
from harness import FAST_HASH, Client, Daemon  # noqa: E402
from pgserver import PostgresServer  # noqa: E402

binary = sys.argv[1]
n = int(sys.argv[2]) if len(sys.argv) > 2 else 1_000_000
samples = int(sys.argv[3]) if len(sys.argv) > 3 else 2000
HASH = "$argon2id$v=19$m=8,t=1,p=1$c2VlZGVkc2VlZGVk$placeholderplaceholderplaceholderplaceh"
LIFT = ["--availability-checks-per-second", "1000000", "--availability-checks-per-session-per-second", "1000000",
        "--max-expensive-requests-per-second", "1000000"]


def measure(daemon):
    c = Client(daemon.sock, timeout=30)
    c.open("signup")
    times = []
    for i in range(samples):
        name = "fresh%dx" % i
        start = time.perf_counter_ns()
        c.send("set", field="username", value=name)
        c.until(lambda m: m.get("event") == "validation" and m["field"] == "username" and m["state"] in ("ok", "failed"))
        times.append((time.perf_counter_ns() - start) / 1000)
    c.close()
    times.sort()
    return statistics.median(times), times[int(len(times) * 0.99)]


def sqlite_run():
    directory = tempfile.mkdtemp(prefix="signupd-lat-")
    atexit.register(shutil.rmtree, directory, ignore_errors=True)  # removed when the run ends
    database = os.path.join(directory, "accounts.sqlite")
    Daemon(binary, directory=directory, database=database, args=FAST_HASH).start().stop()
    con = sqlite3.connect(database)
    con.execute("PRAGMA synchronous=OFF")
    with con:
        con.executemany("INSERT INTO account (id, username, identityKey, passwordHash, createdAt) VALUES (?, ?, ?, ?, 0)",
                        ((i + 1, "seed%d" % i, "seed%d" % i, HASH) for i in range(n)))
        con.executemany("INSERT INTO similarityKey (key, accountId) VALUES (?, ?)", (("seed%d" % i, i + 1) for i in range(n)))
    con.close()
    daemon = Daemon(binary, directory=directory, database=database, args=FAST_HASH + LIFT).start()
    try:
        return measure(daemon)
    finally:
        daemon.stop()


def postgres_run():
    server = PostgresServer()
    server.init().start()
    try:
        server.create_database("latency")
        url = server.url("latency")
        args = FAST_HASH + LIFT + ["--database-password-file", server.password_file]
        Daemon(binary, database=url, args=args).start().stop()
        server.psql("INSERT INTO account (username, identity_key, password_hash, created_at) "
                    "SELECT 'seed' || i, 'seed' || i, '%s', 0 FROM generate_series(0, %d) AS i" % (HASH, n - 1), database="latency")
        server.psql("INSERT INTO similarity_key (key, account_id) SELECT identity_key, id FROM account", database="latency")
        server.psql("ANALYZE", database="latency")
        daemon = Daemon(binary, database=url, args=args).start()
        try:
            return measure(daemon)
        finally:
            daemon.stop()
    finally:
        server.destroy()


rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
for name, run in (("SQLite", sqlite_run), ("PostgreSQL 15 (loopback, TLS)", postgres_run)):
    p50, p99 = run()
    print("%s, %d accounts: availability round trip p50 %.0f µs, p99 %.0f µs (%d checks, commit %s)" % (name, n, p50, p99, samples, rev))
