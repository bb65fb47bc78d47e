#!/usr/bin/env python3
"""The store failing under the daemon — its disk full: the signup answers
ok false with a clear message, validation keeps working, and once the disk is back the
same session signs up. Runs in a private mount namespace (root): a small tmpfs holds the
database.

usage: store_faults.py path/to/signupd   (re-executes itself under `unshare -m`)
"""
import shutil
import atexit
import os
import subprocess
import sys

if os.environ.get("SIGNUPD_IN_NS") != "1":
    if os.geteuid() != 0:
        print("SKIP: store faults need root for a private tmpfs")
        sys.exit(0)
    env = dict(os.environ, SIGNUPD_IN_NS="1")
    sys.exit(subprocess.call(["unshare", "-m", "--propagation", "private", sys.executable] + sys.argv, env=env))

import tempfile

from harness import FAST_HASH, Checks, Client, Daemon

checks = Checks("store faults (full disk)")
mount = tempfile.mkdtemp(prefix="signupd-disk-")
subprocess.check_call(["mount", "-t", "tmpfs", "-o", "size=4m,mode=0700", "tmpfs", mount])


def unmount():
    """However the check ends (the daemon failing to start included): unmounted and removed."""
    subprocess.call(["umount", mount], stderr=subprocess.DEVNULL)
    shutil.rmtree(mount, ignore_errors=True)


atexit.register(unmount)
daemon = Daemon(sys.argv[1], database=os.path.join(mount, "accounts.sqlite"), args=FAST_HASH).start()
filler = os.path.join(mount, "filler")
try:
    c = Client(daemon.sock)
    state = c.fill_signup("fullone", "password")
    checks.check(state["state"] == "ok", "availability works before the fault")

    # Fill the disk to the last byte.
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
    for size in (65536, 4096, 1):
        try:
            while os.write(fd, b"\0" * size) == size:
                pass
        except OSError:
            pass
    os.close(fd)
    result = c.submit_and_wait()
    checks.check(result.get("event") == "result" and result["ok"] is False, "full disk: ok false, %s" % result)
    checks.check(result.get("message") == "Account store unavailable, try again later", "clear message: %s" % result.get("message"))
    enabled, _ = c.until(lambda m: m.get("event") == "enabled")
    checks.check(enabled["value"] is True, "the form is enabled again for a retry")

    # Validation keeps working meanwhile, on another connection too.
    other = Client(daemon.sock)
    other.open("signup")
    other.send("set", field="username", value="stillchecking")
    got, _ = other.until(lambda m: m.get("event") == "validation" and m["state"] in ("ok", "failed"))
    checks.check(got["state"] == "ok", "availability still answered on a full disk: %s" % got)
    other.send("set", field="password", value="abc")
    checks.check(any(m.get("state") == "failed" for m in other.barrier()), "field validation still works")

    # The disk recovers: the same session signs up.
    os.unlink(filler)
    result = c.submit_and_wait()
    checks.check(result.get("ok") is True, "after the disk recovers the same session signs up: %s" % result)

    # (A read-only remount is refused by the kernel while the database is open for
    # writing, so a full disk is the write failure this check can cause at run time.)
    ping = other.barrier()
    checks.check(isinstance(ping, list), "connection still answers ping")
finally:
    code = daemon.stop()
    unmount()
checks.check(code == 0, "daemon exits 0")
checks.done()
