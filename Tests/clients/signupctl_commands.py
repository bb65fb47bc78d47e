#!/usr/bin/env python3
"""signupctl's scripted commands end to end against the real daemon, including every
documented exit code (README.md, "Exit codes"; 130 is covered by the tmux test).

usage: signupctl_commands.py path/to/signupd path/to/signupctl
"""
import json
import os
import socket
import subprocess
import sys
import threading

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "robustness"))
from harness import FAST_HASH, Checks, Client, Daemon  # noqa: E402

SIGNUPD, CTL = sys.argv[1], sys.argv[2]
checks = Checks("signupctl commands and exit codes")
daemon = Daemon(SIGNUPD, args=FAST_HASH).start()
ENV = {"PATH": "/usr/bin:/bin", "SIGNUPD_SOCKET": daemon.sock}


def ctl(*args, stdin=None, env=ENV):
    return subprocess.run([CTL] + list(args), input=stdin, capture_output=True, text=True, env=env, timeout=60)


def expect(result, code, what):
    checks.check(result.returncode == code, "%s: exit %d, wanted %d; stdout=%r stderr=%r" % (what, result.returncode, code, result.stdout, result.stderr))
    if code != 0:
        lines = result.stderr.strip().splitlines()
        checks.check(len(lines) == 1 and lines[0].startswith("signupctl: "), "%s: a one-line reason on stderr: %r" % (what, result.stderr))


def fake_server(path, behaviour):
    """A socket that is not signupd: it sends garbage, or greets and then says nothing."""
    server = socket.socket(socket.AF_UNIX)
    server.bind(path)
    server.listen(4)

    def serve():
        while True:
            conn, _ = server.accept()
            if behaviour == "garbage":
                conn.sendall(b"HTTP/1.1 200 OK\r\n\r\n")
                conn.close()
            else:
                conn.sendall(b'{"event":"hello","protocol":"signup/1","server":"mute"}\n')
                threading.Timer(30, conn.close).start()

    threading.Thread(target=serve, daemon=True).start()


try:
    # 0: success, for every command.
    r = ctl("signup", "--username", "scripted", "--password-stdin", stdin="pass word\n")
    expect(r, 0, "signup")
    checks.check(r.stdout.strip() == "Signed up: scripted", "signup prints what happened: %r" % r.stdout)
    pwfile = os.path.join(daemon.directory, "pw")
    with open(pwfile, "w") as f:
        f.write("pass word\n")
    r = ctl("login", "--username", "scripted", "--password-file", pwfile)
    expect(r, 0, "login")
    token = r.stdout.strip()
    checks.check(len(token) == 43, "login prints the token alone: %r" % r.stdout)
    r = ctl("verify", "--", token)  # a base64url token may begin with "-"
    expect(r, 0, "verify")
    checks.check(r.stdout.strip() == "scripted", "verify prints the user")
    r = ctl("login", "--username", "scripted", "--password-stdin", "--json", stdin="pass word\n")
    expect(r, 0, "login --json")
    out = json.loads(r.stdout)
    checks.check(out["ok"] is True and out["user"] == "scripted" and len(out["token"]) == 43, "login --json: %s" % out)
    r = ctl("describe", "--json")
    expect(r, 0, "describe --json")
    checks.check([f["name"] for f in json.loads(r.stdout)["forms"]] == ["signup", "login"], "describe --json lists the forms")
    r = ctl("describe")
    checks.check("repeatedPassword" in r.stdout and "(secret)" in r.stdout, "describe shows fields")
    r = ctl("ping", "--json")
    expect(r, 0, "ping --json")
    checks.check(json.loads(r.stdout)["roundTripMicroseconds"] >= 0, "ping --json has a round trip")
    r = ctl("raw", stdin='{"op":"describe","id":1}\n{"op":"ping","id":2}\n')
    expect(r, 0, "raw")
    events = [json.loads(line)["event"] for line in r.stdout.splitlines()]
    checks.check(events == ["hello", "description", "pong"], "raw relays lines both ways: %s" % events)
    r = ctl("--generate-completion-script", "bash")
    checks.check(r.returncode == 0 and "signupctl" in r.stdout, "bash completions are generated")

    # 1: the daemon said no.
    expect(ctl("login", "--username", "scripted", "--password-stdin", stdin="wrong\n"), 1, "wrong password")
    expect(ctl("verify", "A" * 43), 1, "unknown token")

    # 2: invalid input.
    r = ctl("signup", "--username", "scripted", "--password-stdin", stdin="pass word\n")
    expect(r, 2, "taken name")
    checks.check("Username already taken" in r.stderr, "says the name is taken")
    r = ctl("signup", "--username", "short", "--password-stdin", stdin="abc\n")
    expect(r, 2, "short password")
    checks.check("at least 5 characters" in r.stderr, "says why")
    expect(ctl("signup", "--username", "bad name!", "--password-stdin", stdin="pass word\n"), 2, "invalid username")
    expect(ctl("login", "--password-stdin", stdin="x\n"), 2, "no username when not on a terminal")

    # 3: unreachable.
    r = ctl("ping", "--socket", os.path.join(daemon.directory, "nothing.sock"))
    expect(r, 3, "no socket")
    checks.check("cannot connect" in r.stderr, "says it cannot connect")

    # 4: the conversation broke.
    garbage = os.path.join(daemon.directory, "garbage.sock")
    fake_server(garbage, "garbage")
    expect(ctl("ping", "--socket", garbage), 4, "not signupd")
    mute = os.path.join(daemon.directory, "mute.sock")
    fake_server(mute, "mute")
    r = ctl("describe", "--socket", mute, "--timeout", "1")
    expect(r, 4, "timeout")
    checks.check("did not answer within" in r.stderr, "says it timed out")

    # 64: bad usage.
    checks.check(ctl("signup", "--no-such-option").returncode == 64, "unknown option is exit 64")
    checks.check(ctl("verify").returncode == 64, "missing argument is exit 64")

    # monitor: attach to a live session and print its events until it is closed.
    owner = Client(daemon.sock)
    session = owner.open("signup")
    monitor = subprocess.Popen([CTL, "monitor", "--session", session, "--json"], stdout=subprocess.PIPE, text=True, env=ENV)
    first = json.loads(monitor.stdout.readline())
    checks.check(first["event"] == "attached" and first["session"] == session, "monitor attaches: %s" % first)
    for _ in range(5):
        monitor.stdout.readline()  # the snapshot
    owner.send("set", field="password", value="abc")
    seen = json.loads(monitor.stdout.readline())
    checks.check(seen["event"] == "validation" and seen["field"] == "password" and seen["state"] == "failed", "monitor shows events: %s" % seen)
    owner.send("close")
    last = json.loads(monitor.stdout.readline())
    checks.check(last["event"] == "closed", "monitor sees the end: %s" % last)
    checks.check(monitor.wait(timeout=30) == 0, "monitor exits 0 when the session ends")
    expect(ctl("monitor", "--session", "0000000000000000"), 1, "monitor of an unknown session")
finally:
    checks.check(daemon.stop() == 0, "daemon exits 0")
checks.done()
