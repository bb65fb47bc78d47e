#!/usr/bin/env python3
"""The boot test's operator steps inside the booted sandbox (scripts/systemd-boot-test.sh),
run as the user the step names:

  scrape SOCKET          GET /metrics over the Unix socket: prints the body; exit 2 when the
                         socket refuses this user (permission), 1 on anything else
  hold SOCKET N SECONDS  holds N connections open (each greeted), prints "holding", then
                         waits SECONDS or until a connection is closed by signupd, and prints
                         what the closed one was told
  keep-form SOCKET FIFO  opens a signup form, types a username, prints "open SESSION", then
                         waits for a line on FIFO (the step's restart happens meanwhile),
                         types a password on the same connection and prints "kept SEQS" when
                         every answer came in order with no bye or error; else the lines
"""

import json
import socket
import sys
import time


def scrape(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(10)
    try:
        s.connect(path)
    except PermissionError as e:
        print("refused: %s" % e)
        return 2
    s.sendall(b"GET /metrics HTTP/1.1\r\nHost: signupd\r\nConnection: close\r\n\r\n")
    data = b""
    while True:
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    if not head.startswith(b"HTTP/1.1 200"):
        print(head.decode(errors="replace"))
        return 1
    sys.stdout.write(body.decode())
    return 0


def hold(path, count, seconds):
    held = []
    for _ in range(count):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(path)
        reader = s.makefile("rb")
        json.loads(reader.readline())  # hello
        held.append((s, reader))
    print("holding", flush=True)
    deadline = time.monotonic() + seconds
    for s, _ in held:
        s.setblocking(False)
    while time.monotonic() < deadline:
        for s, reader in held:
            try:
                data = s.recv(4096)
            except BlockingIOError:
                continue
            print("closed: %s" % data.decode(errors="replace").strip(), flush=True)
            return 0
        time.sleep(0.05)  # polling the held sockets for the daemon's close
    return 0


def keep_form(path, fifo):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(60)
    s.connect(path)
    reader = s.makefile("rb")
    json.loads(reader.readline())  # hello
    seen = []

    def until_pong(tag):
        s.sendall(b'{"op":"ping","id":"%s"}\n' % tag.encode())
        while True:
            line = reader.readline()
            if not line:
                seen.append({"event": "eof"})
                return
            message = json.loads(line)
            if message.get("event") == "pong" and message.get("id") == tag:
                return
            seen.append(message)

    s.sendall(b'{"op":"open","form":"signup","id":"open"}\n{"op":"set","field":"username","value":"keeper"}\n')
    until_pong("before")
    opened = [m for m in seen if m.get("event") == "opened"]
    if not opened:
        print("not opened: %s" % seen)
        return 1
    print("open %s" % opened[0]["session"], flush=True)
    before = len(seen)
    with open(fifo) as go:
        go.readline()
    s.sendall(b'{"op":"set","field":"password","value":"k33p-it-going"}\n{"op":"snapshot"}\n')
    until_pong("after")
    after = seen[before:]
    seqs = [m["seq"] for m in seen if "seq" in m]
    bad = [m for m in after if m.get("event") in ("bye", "error", "eof", "closed")]
    fields = {m["field"] for m in after if m.get("event") == "validation"}
    if bad or seqs != sorted(set(seqs)) or "password" not in fields or "username" not in fields:
        print("lost: %s" % after)
        return 1
    print("kept %d..%d" % (seqs[0], seqs[-1]), flush=True)
    return 0


if __name__ == "__main__":
    if sys.argv[1] == "keep-form":
        sys.exit(keep_form(sys.argv[2], sys.argv[3]))
    if sys.argv[1] == "scrape":
        sys.exit(scrape(sys.argv[2]))
    sys.exit(hold(sys.argv[2], int(sys.argv[3]), float(sys.argv[4])))
