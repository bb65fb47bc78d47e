#!/usr/bin/env python3
"""examples/SwiftClient's signup-example (a Swift program on the SignupClient library,
depending on this package by path) against the real daemon: it prints each output of the
form as it changes, submits once enabled, and exits 0 on success, 1 when refused.

usage: swift_example_test.py path/to/signupd path/to/signup-example
"""
import os
import random
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "robustness"))
from harness import FAST_HASH, Checks, Daemon  # noqa: E402

SIGNUPD, EXAMPLE = sys.argv[1], sys.argv[2]
checks = Checks("the Swift client example (SignupClient)")
daemon = Daemon(SIGNUPD, args=FAST_HASH).start()


def example(*args):
    return subprocess.run([EXAMPLE, "--socket", daemon.sock] + list(args), capture_output=True, text=True, timeout=60)


try:
    name = "swifty%d" % random.randrange(1 << 30)
    r = example("--username", name, "--password", "pass word")
    lines = r.stdout.splitlines()
    checks.check(r.returncode == 0, "signs up: exit %d, stdout=%r stderr=%r" % (r.returncode, r.stdout, r.stderr))
    checks.check(lines and lines[-1] == "result: ok Signed up", "prints the result last: %r" % lines)
    checks.check("username: ok Username available" in lines, "prints the username's validation: %r" % lines)
    checks.check("enabled: true" in lines and lines.index("enabled: true") < lines.index("busy: true"), "submits once enabled: %r" % lines)
    checks.check(lines.index("busy: true") < lines.index("result: ok Signed up"), "busy before the result: %r" % lines)
    checks.check(all(line.strip() for line in lines), "one line per change: %r" % lines)

    # The same name again: taken, so the form is refused (exit 1), saying why.
    r = example("--username", name, "--password", "pass word")
    checks.check(r.returncode == 1, "a taken name is refused: exit %d, stdout=%r stderr=%r" % (r.returncode, r.stdout, r.stderr))
    checks.check("username: failed Username already taken" in r.stdout.splitlines(), "says the name is taken: %r" % r.stdout)
    # A password that is too short: refused too.
    r = example("--username", name + "x", "--password", "abc")
    checks.check(r.returncode == 1, "a short password is refused: exit %d, stdout=%r" % (r.returncode, r.stdout))
    # No daemon: not a refusal.
    r = subprocess.run([EXAMPLE, "--socket", os.path.join(daemon.directory, "nothing.sock"), "--username", "a", "--password", "b"],
                       capture_output=True, text=True, timeout=60)
    checks.check(r.returncode == 2 and "connect_failed" in r.stdout, "no daemon: exit 2 naming why: %r" % r.stdout)
finally:
    daemon.stop()
checks.done()
