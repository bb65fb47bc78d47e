#!/usr/bin/env python3
"""Account rules and connection limits seen from outside:
- failed logins are rate-limited per username (5 a minute): the 6th attempt is refused
  even with the right password, other users are unaffected;
- a password hashed with old Argon2id parameters is re-hashed with the new ones at the
  next login (the stored hash changes, the password still works);
- --max-connections and --max-connections-per-user refuse the next connection with
  `limit_exceeded` and `bye`, and others keep working.

usage: accounts_and_limits.py path/to/signupd
"""
import json
import os
import socket
import sqlite3
import subprocess
import sys
import time

from harness import FAST_HASH, Checks, Client, Daemon, as_uid

checks = Checks("accounts and limits")
binary = sys.argv[1]


def login(c, name, password):
    c.open("login")
    c.send("set", field="username", value=name)
    c.send("set", field="password", value=password)
    c.barrier()
    return c.submit_and_wait()


daemon = Daemon(binary, args=FAST_HASH).start()
try:
    c = Client(daemon.sock)
    for name in ("limited", "other"):
        c.fill_signup(name, "right password")
        checks.check(c.submit_and_wait()["ok"] is True, "signup " + name)
    for attempt in range(5):
        r = login(c, "limited", "wrong password")
        checks.check(r["message"] == "Invalid username or password", "attempt %d refused as invalid" % attempt)
    r = login(c, "LIMITED", "right password")
    checks.check(r["ok"] is False and r["message"] == "Too many attempts, try again later", "6th attempt limited: %s" % r)
    checks.check(login(c, "other", "right password")["ok"] is True, "another user is not limited")
finally:
    checks.check(daemon.stop() == 0, "daemon exits 0")

# Tokens expire: with a 1-second lifetime, a fresh token verifies, then stops verifying.
short = Daemon(binary, args=FAST_HASH + ["--token-lifetime", "1"]).start()
try:
    c = Client(short.sock)
    c.fill_signup("expiring", "some password")
    c.submit_and_wait()
    token = login(c, "expiring", "some password")["token"]
    verified, _ = c.reply(c.send("verify", token=token))
    checks.check(verified["event"] == "verified", "a fresh token verifies: %s" % verified)
    deadline = time.monotonic() + 10
    expired = False
    while time.monotonic() < deadline and not expired:
        answer, _ = c.reply(c.send("verify", token=token))
        expired = answer.get("code") == "invalid_token"
        if not expired:
            time.sleep(0.1)  # waiting for wall-clock time to pass, which is what is tested
    checks.check(expired, "the token is invalid after its lifetime")
finally:
    checks.check(short.stop() == 0, "daemon exits 0")

# Re-hash on login when the parameters changed.
old = Daemon(binary, args=["--argon2-ops", "1", "--argon2-memory-kib", "8"]).start()
c = Client(old.sock)
c.fill_signup("upgraded", "my password")
c.submit_and_wait()
old.stop()
db = sqlite3.connect(old.database)
before = db.execute("SELECT passwordHash FROM account WHERE username = 'upgraded'").fetchone()[0]
new = Daemon(binary, directory=old.directory, database=old.database, args=["--argon2-ops", "2", "--argon2-memory-kib", "16"]).start()
try:
    c = Client(new.sock)
    checks.check(login(c, "upgraded", "my password")["ok"] is True, "login with the old hash works")
    after = db.execute("SELECT passwordHash FROM account WHERE username = 'upgraded'").fetchone()[0]
    checks.check(before.startswith("$argon2id$v=19$m=8,t=1") and after.startswith("$argon2id$v=19$m=16,t=2"), "re-hashed: %s -> %s" % (before[:28], after[:28]))
    c2 = Client(new.sock)
    checks.check(login(c2, "upgraded", "my password")["ok"] is True, "the new hash works")
    checks.check("my password" not in new.log(), "the password is not in the log")
finally:
    checks.check(new.stop() == 0, "daemon exits 0")

# Connection limits, in total and per uid.
limited = Daemon(binary, args=FAST_HASH + ["--max-connections", "3", "--max-connections-per-user", "2", "--socket-mode", "0666"]).start()
os.chmod(limited.directory, 0o711)
try:
    first, second = Client(limited.sock), Client(limited.sock)
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(10)
    s.connect(limited.sock)
    reader = s.makefile("rb")
    lines = [json.loads(reader.readline()), json.loads(reader.readline())]
    checks.check(lines[0]["event"] == "error" and lines[0]["code"] == "limit_exceeded", "3rd root connection: limit_exceeded: %s" % lines)
    checks.check(lines[1]["event"] == "bye" and reader.readline() == b"", "then bye and close")
    checks.check(isinstance(first.barrier(), list), "the first connections still work")
    if os.geteuid() == 0:
        script = "import socket,sys; s=socket.socket(socket.AF_UNIX); s.settimeout(10); s.connect(sys.argv[1]); print(s.makefile('rb').readline().decode().strip())"
        out = subprocess.run(as_uid(65534, [sys.executable, "-c", script, limited.sock]),
                             capture_output=True, text=True, timeout=30).stdout
        checks.check('"event":"hello"' in out, "another uid still gets in under the total limit: %s" % out)
finally:
    checks.check(limited.stop() == 0, "daemon exits 0")
checks.done()
