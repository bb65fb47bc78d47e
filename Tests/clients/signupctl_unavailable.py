#!/usr/bin/env python3
"""signupctl while signupd cannot decide: phone numbers that cannot be checked (a signupd
without its libsignupd-phone.so), and the account store down (PostgreSQL stopped under a
running daemon): signup, login and verify exit 75 (EX_TEMPFAIL) with code "unavailable"
and the daemon's messageId, never the answers that mean "no" (1 refused, 2 invalid input).
The store part skips where no PostgreSQL server can run.

usage: signupctl_unavailable.py path/to/signupd path/to/signupctl
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "robustness"))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "postgres"))
from harness import FAST_HASH, Checks, Daemon  # noqa: E402
import pgserver  # noqa: E402

SIGNUPD, CTL = sys.argv[1], sys.argv[2]

# Phone numbers that cannot be checked (helper-30: exit 2, "invalid input", as if the number
# were wrong): a copy of signupd with no libsignupd-phone.so beside it or in ../lib/signupd.
phone = Checks("signupctl while phone numbers cannot be checked")
lonely = tempfile.mkdtemp(prefix="signupd-nophone-")
os.chmod(lonely, 0o755)
shutil.copy(SIGNUPD, os.path.join(lonely, "signupd"))
daemon = Daemon(os.path.join(lonely, "signupd"), args=FAST_HASH).start()
try:
    env = {"PATH": "/usr/bin:/bin", "SIGNUPD_SOCKET": daemon.sock}
    for name, args in (("signup", ["signup", "--form", "phone-signup"]), ("login", ["login", "--form", "phone-login"])):
        r = subprocess.run([CTL, "--json"] + args + ["--username", "138 0013 8000", "--password-stdin"], input="pass word\n",
                           capture_output=True, text=True, env=env, timeout=60)
        lines = r.stdout.strip().splitlines()
        error = (json.loads(lines[0]) if len(lines) == 1 else {}).get("error", {})
        phone.check(r.returncode == 75 and error.get("code") == "unavailable" and error.get("messageId") == "phone.unavailable",
                    "%s with a number while numbers cannot be checked: exit 75, unavailable, phone.unavailable: %d %r %r" % (name, r.returncode, r.stdout, r.stderr))
finally:
    daemon.stop()
    shutil.rmtree(lonely, ignore_errors=True)
phone.done()

try:
    server = pgserver.PostgresServer().init().start()
except pgserver.Unavailable as why:
    print("SKIP: no PostgreSQL server: %s" % why)
    sys.exit(0)
checks = Checks("signupctl while the account store is unavailable")
daemon = None
try:
    server.create_database("ctl")
    daemon = Daemon(SIGNUPD, database=server.url("ctl"), args=FAST_HASH + ["--database-password-file", server.password_file, "--database-timeout", "2"]).start()
    env = {"PATH": "/usr/bin:/bin", "SIGNUPD_SOCKET": daemon.sock}

    def ctl(*args, stdin=None):
        return subprocess.run([CTL, "--json"] + list(args), input=stdin, capture_output=True, text=True, env=env, timeout=60)

    r = ctl("signup", "--username", "before", "--password-stdin", stdin="pass word\n")
    checks.check(r.returncode == 0, "signup works while the store is up: %r %r" % (r.stdout, r.stderr))
    r = ctl("login", "--username", "before", "--password-stdin", stdin="pass word\n")
    checks.check(r.returncode == 0, "login works while the store is up: %r" % r.stderr)
    token = json.loads(r.stdout)["token"]

    server.stop("fast")
    for name, args, stdin in (
        ("signup", ["signup", "--username", "during", "--password-stdin"], "pass word\n"),
        ("login", ["login", "--username", "before", "--password-stdin"], "pass word\n"),
        ("verify", ["verify"], token + "\n"),
    ):
        r = ctl(*args, stdin=stdin)
        lines = r.stdout.strip().splitlines()
        envelope = json.loads(lines[0]) if len(lines) == 1 else {}
        error = envelope.get("error", {})
        checks.check(r.returncode == 75, "%s while the store is down: exit 75, got %d %r %r" % (name, r.returncode, r.stdout, r.stderr))
        checks.check(error.get("code") == "unavailable" and error.get("exitCode") == 75, "%s --json: code unavailable: %s" % (name, envelope))
        if name != "verify":
            checks.check(error.get("messageId") in ("store.unavailable", "availability.unreachable"), "%s --json keeps the daemon's messageId: %s" % (name, envelope))
    # Past the first failures, with no load to keep anything warm: still answered at once,
    # not after --database-timeout (2 s here), for as long as the server stays down.
    time.sleep(1.5)
    for i in range(3):
        started = time.monotonic()
        r = ctl("signup", "--username", "later%d" % i, "--password-stdin", stdin="pass word\n")
        took = time.monotonic() - started
        checks.check(r.returncode == 75 and took < 1.0, "signup 1.5 s into the outage: exit 75 within 1 s, got %d after %.2f s" % (r.returncode, took))
        print("  signupctl signup during the outage answered in %.3f s" % took)
    server.start()
finally:
    if daemon:
        daemon.stop()
    server.destroy()
checks.done()

# A start that fails after its hello (the store could not be opened): signupd says bye
# "start failed" and closes at once. signupctl exits 3 with code start_failed, whether its
# request left before the close (it reads the bye) or after (the write fails; it reads the
# bye left in its socket), never 4 with "Broken pipe" (helper-38).
import socket  # noqa: E402
import threading  # noqa: E402

failed = Checks("signupctl against a start that fails after its hello")
where = tempfile.mkdtemp(prefix="signupd-startfail-")
path = os.path.join(where, "s.sock")
listener = socket.socket(socket.AF_UNIX)
listener.bind(path)
listener.listen(8)
HELLO = (b'{"event":"hello","protocol":"signup/1","server":"signupd/0.1.0","forms":["signup","login"],'
         b'"limits":{"maxLineBytes":65536,"maxSessionsPerConnection":16,"maxOutputBytes":1048576}}\n')
CASES = (["--json", "ping"], ["--json", "status"], ["ping"])


def greet_then_fail():
    for _ in CASES:
        conn, _ = listener.accept()
        conn.sendall(HELLO + b'{"event":"bye","reason":"start failed"}\n')
        conn.close()


threading.Thread(target=greet_then_fail, daemon=True).start()
for args in CASES:
    r = subprocess.run([CTL] + args, capture_output=True, text=True, timeout=30, env={"PATH": "/usr/bin:/bin", "SIGNUPD_SOCKET": path})
    failed.check(r.returncode == 3, "%s after hello then bye start failed: exit 3, got %d %r %r" % (args, r.returncode, r.stdout, r.stderr))
    if "--json" in args:
        error = json.loads(r.stdout.strip().splitlines()[0]).get("error", {})
        failed.check(error.get("code") == "start_failed" and error.get("exitCode") == 3, "%s: code start_failed: %r" % (args, r.stdout))
    else:
        failed.check("could not start" in r.stderr and "journalctl -u signupd" in r.stderr, "%s says where to look: %r" % (args, r.stderr))
listener.close()
shutil.rmtree(where, ignore_errors=True)
failed.done()
