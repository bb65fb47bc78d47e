#!/usr/bin/env python3
"""A client that stops reading while its session keeps producing events is dropped at the
output cap (after a `bye` it may never read); another client keeps being answered.

usage: slow_consumer.py path/to/signupd
"""
import socket
import sys
import time

from harness import FAST_HASH, Checks, Client, Daemon

checks = Checks("slow consumer")
daemon = Daemon(sys.argv[1], args=FAST_HASH + ["--max-output-bytes", "65536"]).start()
try:
    other = Client(daemon.sock)
    other.open("signup")
    hog = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    hog.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    hog.connect(daemon.sock)
    hog.sendall(b'{"op":"open","form":"signup"}\n')
    # Each set flips the password's validation: one event per request, never read.
    request = b'{"op":"set","field":"password","value":"abc"}\n{"op":"set","field":"password","value":"abcdef"}\n'
    dropped = False
    sent = 0
    deadline = time.monotonic() + 60
    hog.settimeout(5)
    while time.monotonic() < deadline:
        try:
            hog.sendall(request * 64)
            sent += 128
        except (BrokenPipeError, ConnectionResetError):
            dropped = True
            break
        except socket.timeout:
            # The daemon stopped reading from us: it has closed, or is about to.
            break
        if sent % 12800 == 0:
            other.barrier()  # others are answered all along
    if not dropped:
        # Our socket may still accept writes into the kernel buffer: the read side shows the close.
        hog.settimeout(30)
        data = b""
        try:
            while True:
                chunk = hog.recv(1 << 20)
                if not chunk:
                    dropped = True
                    break
                data += chunk
        except (ConnectionResetError, socket.timeout):
            dropped = True
    checks.check(dropped, "the slow consumer was disconnected after %d requests" % sent)
    checks.check("stopped reading" in daemon.log(), "the daemon logged why")
    other.send("set", field="password", value="abc")
    seen = other.barrier()
    checks.check(any(m.get("state") == "failed" for m in seen), "the other client is still served")
finally:
    checks.check(daemon.stop() == 0, "daemon exits 0")
checks.done()
