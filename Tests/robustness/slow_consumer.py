#!/usr/bin/env python3
"""A client that pipelines requests while never reading their answers is paused: the daemon
stops reading from it (backpressure) with a bounded amount buffered, instead of serving it
without bound; another client keeps being answered, and the paused one is served again
once it reads.

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
    dropped = paused = False
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
            # The daemon stopped reading from us: backpressure, not a buffer without bound.
            paused = True
            break
        if sent % 12800 == 0:
            other.barrier()  # others are answered all along
    checks.check(paused and not dropped, "a client that does not read is paused, not served without bound: daemon stopped reading after %d requests" % sent)
    checks.check(sent < 200000, "the daemon took a bounded number of requests from it: %d" % sent)
    other.barrier()
    checks.check(daemon.rss_kib() < 200 * 1024, "the daemon's memory stays bounded: %d MiB" % (daemon.rss_kib() // 1024))
    # Once it reads again it is served again, in order, from where it paused.
    hog.settimeout(10)
    first = hog.recv(1 << 16)
    checks.check(first.startswith(b'{"event":"hello"'), "the paused client gets its answers when it reads: %r" % first[:40])
    hog.close()
    other.send("set", field="password", value="abc")
    seen = other.barrier()
    checks.check(any(m.get("state") == "failed" for m in seen), "the other client is still served")
finally:
    checks.check(daemon.stop() == 0, "daemon exits 0")
checks.done()
