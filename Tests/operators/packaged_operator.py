#!/usr/bin/env python3
"""The boot test's operator steps inside the booted sandbox (scripts/systemd-boot-test.sh),
run as the user the step names:

  scrape SOCKET          GET /metrics over the Unix socket: prints the body; exit 2 when the
                         socket refuses this user (permission), 1 on anything else
  hold SOCKET N SECONDS  holds N connections open (each greeted), prints "holding", then
                         waits SECONDS or until a connection is closed by signupd, and prints
                         what the closed one was told
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


if __name__ == "__main__":
    if sys.argv[1] == "scrape":
        sys.exit(scrape(sys.argv[2]))
    sys.exit(hold(sys.argv[2], int(sys.argv[3]), float(sys.argv[4])))
