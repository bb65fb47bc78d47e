#!/usr/bin/env python3
"""Peer credentials: a client running as another uid (nobody) cannot attach to root's
session (`forbidden`) and its connection keeps working; root can attach to its own.

usage: other_uid.py path/to/signupd   (root only; uses setpriv from util-linux)
"""
import json
import os
import subprocess
import sys

from harness import FAST_HASH, Checks, Client, Daemon, as_uid

if os.geteuid() != 0:
    print("SKIP: needs root to run a client as another user")
    sys.exit(0)
checks = Checks("attach across users")
daemon = Daemon(sys.argv[1], args=FAST_HASH + ["--socket-mode", "0666"]).start()
os.chmod(daemon.directory, 0o711)
try:
    owner = Client(daemon.sock)
    session = owner.open("signup")
    script = r'''
import json, socket, sys
s = socket.socket(socket.AF_UNIX); s.settimeout(10); s.connect(sys.argv[1]); r = s.makefile("rb")
r.readline()
s.sendall(json.dumps({"op": "attach", "session": sys.argv[2], "id": 1}).encode() + b"\n")
print(r.readline().decode().strip())
s.sendall(b'{"op":"ping","id":2}\n')
print(r.readline().decode().strip())
s.sendall(b'{"op":"sessions","id":3}\n')
print(r.readline().decode().strip())
'''
    out = subprocess.run(as_uid(65534, [sys.executable, "-c", script, daemon.sock, session]),
                         capture_output=True, text=True, timeout=30)
    lines = out.stdout.splitlines()
    checks.check(len(lines) == 3 and '"code":"forbidden"' in lines[0], "another uid is forbidden: %s %s" % (lines, out.stderr))
    checks.check('"event":"pong"' in lines[1], "and its connection still answers ping")
    checks.check(len(lines) == 3 and json.loads(lines[2]) == {"event": "sessions", "id": 3, "sessions": []},
                 "another uid's `sessions` does not list root's session: %s" % lines)
    same = Client(daemon.sock)
    attached, _ = same.reply(same.send("attach", session=session))
    checks.check(attached["event"] == "attached", "the same uid may attach: %s" % attached)
    listed, _ = same.reply(same.send("sessions"))
    mine = [s for s in listed["sessions"] if s["session"] == session]
    checks.check(len(mine) == 1 and mine[0]["form"] == "signup" and mine[0]["views"] == 1 and mine[0]["ageSeconds"] >= 0,
                 "the same uid's `sessions` lists it with one attached view: %s" % listed)
finally:
    checks.check(daemon.stop() == 0, "daemon exits 0")
checks.done()
