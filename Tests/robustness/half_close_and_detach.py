#!/usr/bin/env python3
"""What a client is promised when it stops sending or detaches (found by a fresh review of
the connection state machine, issue 22):
1. a client that half-closes (shutdown SHUT_WR) and then reads slowly gets every answer
   before the daemon closes (it used to close with the NIO buffer still holding ~a third);
2. a half-closed login or signup gets the events published with its last one (`busy: false`
   after `result`, `enabled` after the last validation), not a close in between;
3. a connection that detached from a session (`close` of an attached session) hears
   nothing of that session after its `closed` reply, whichever event loop the session is on.

usage: half_close_and_detach.py path/to/signupd
"""
import json
import random
import socket
import sys
import time

from harness import FAST_HASH, Checks, Daemon

checks = Checks("half-close and detach")
daemon = Daemon(sys.argv[1], args=FAST_HASH).start()


def connect(timeout=10):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(timeout)
    s.connect(daemon.sock)
    return s


def read_to_eof(s, pause=0.0, chunk=4096):
    """Everything until the daemon closes, reading `chunk` bytes with `pause` between reads."""
    data = b""
    while True:
        got = s.recv(chunk)
        if not got:
            return [json.loads(line) for line in data.split(b"\n") if line]
        data += got
        if pause:
            time.sleep(pause)


try:
    # 1. 3,000 pings, half-close, then read about 40 KB a second.
    s = connect(30)
    s.sendall(b"".join(b'{"op":"ping","id":%d}\n' % i for i in range(3000)))
    s.shutdown(socket.SHUT_WR)
    events = read_to_eof(s, pause=0.1)
    pongs = [e["id"] for e in events if e.get("event") == "pong"]
    checks.check(pongs == list(range(3000)), "a slow reader that half-closed gets all 3,000 answers in order, then the close: got %d" % len(pongs))
    s.close()

    # 2. A signup and a login, each sent whole and half-closed: the last events arrive.
    user = "halfclose%d" % random.randrange(10**6)
    for form, lines, wanted in [
        ("signup", [b'{"op":"open","form":"signup","id":1}', b'{"op":"set","field":"username","value":"%s"}' % user.encode(),
                    b'{"op":"set","field":"password","value":"Secr3t!pw"}', b'{"op":"set","field":"repeatedPassword","value":"Secr3t!pw"}',
                    b'{"op":"ping","id":"p"}'], "enabled"),
        ("login", [b'{"op":"open","form":"login","id":1}', b'{"op":"set","field":"username","value":"%s"}' % user.encode(),
                   b'{"op":"set","field":"password","value":"wrong-password-1"}', b'{"op":"submit","id":2}'], "busy"),
    ]:
        for attempt in range(5):
            s = connect()
            s.sendall(b"\n".join(lines) + b"\n")
            s.shutdown(socket.SHUT_WR)
            events = read_to_eof(s)
            s.close()
            session = [e for e in events if "seq" in e]
            last = session[-1] if session else {}
            if form == "signup":
                ok = last.get("event") == "enabled" and last.get("value") is True
            else:
                results = [i for i, e in enumerate(session) if e.get("event") == "result"]
                ok = bool(results) and any(e.get("event") == "busy" and e.get("value") is False for e in session[results[-1]:])
            if not ok:
                break
        checks.check(ok, "a half-closed %s gets the events published with its last one (%s) before the close: last %s" % (form, wanted, last))

    # 3. Attach, set, close and ping in one write: nothing of the session after `closed`.
    leaks = []
    for attempt in range(30):
        opener = connect()
        opener.sendall(b'{"op":"open","form":"signup"}\n')
        reader = opener.makefile("rb")
        reader.readline()
        session = json.loads(reader.readline())["session"]
        viewer = connect(0.6)
        viewer_reader = viewer.makefile("rb")
        viewer_reader.readline()
        viewer.sendall(b'{"op":"attach","session":"%s"}\n{"op":"set","field":"username","value":"n%d"}\n{"op":"close","id":"c"}\n{"op":"ping","id":"p"}\n'
                       % (session.encode(), random.randrange(10**9)))
        seen = []
        try:
            while True:
                line = viewer_reader.readline()
                if not line:
                    break
                seen.append(json.loads(line))
        except socket.timeout:
            pass
        names = [e.get("event") for e in seen]
        after = seen[names.index("closed") + 1:] if "closed" in names else seen
        if [e.get("event") for e in after] != ["pong"]:
            leaks.append(after)
        viewer.close()
        opener.close()
    checks.check(not leaks, "after its own closed, a detached connection hears only its pong (30 rounds): %d leaked, e.g. %s" % (len(leaks), leaks[:1]))
finally:
    checks.check(daemon.stop() == 0, "daemon exits 0")
checks.done()
