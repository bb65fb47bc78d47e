#!/usr/bin/env python3
"""Load on connections: HOLD connections at once, each with an open session, all still
answering ping; then CYCLES connect/open/close cycles, after which the daemon's file
descriptors are back to where they were and its memory near it.

usage: connections.py path/to/signupd [HOLD [CYCLES]]   (defaults 10000 and 100000)
"""
import os
import resource
import socket
import sys

from harness import FAST_HASH, Checks, Client, Daemon

binary = sys.argv[1]
hold = int(sys.argv[2]) if len(sys.argv) > 2 else 10000
cycles = int(sys.argv[3]) if len(sys.argv) > 3 else 100000
checks = Checks("connections (%d held, %d cycles)" % (hold, cycles))
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
daemon = Daemon(binary, args=FAST_HASH + ["--max-connections-per-user", str(hold + 100), "--max-connections", str(hold + 100)]).start()
OPEN = b'{"op":"open","form":"login"}\n{"op":"ping","id":1}\n'


def read_until(sock, token, buffer=b""):
    while token not in buffer:
        chunk = sock.recv(65536)
        if not chunk:
            raise EOFError("closed")
        buffer += chunk
    return buffer


try:
    base_sockets = daemon.socket_count()
    # Hold: connect all, then open a session and ping on each.
    socks = []
    for _ in range(hold):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(daemon.sock)  # blocking: waits for room in the listen backlog
        s.settimeout(60)
        socks.append(s)
    for s in socks:
        s.sendall(OPEN)
    answered = sum(1 for s in socks if b'"pong"' in read_until(s, b'"pong"'))
    checks.check(answered == hold, "all %d held connections answered ping (%d)" % (hold, answered))
    held = daemon.socket_count() - base_sockets
    # Minus one: sd_notify (STATUS=, once a second) holds a socket for the instant of a call,
    # and the baseline may have caught one.
    checks.check(held >= hold - 1, "the daemon holds them all: %d sockets more than at start" % held)
    for s in socks:
        s.sendall(b'{"op":"ping","id":2}\n')
    answered = sum(1 for s in socks if b'"id":2' in read_until(s, b'"id":2'))
    checks.check(answered == hold, "and answer again while all are open")
    for s in socks:
        s.close()
    c = Client(daemon.sock)
    c.barrier()
    c.close()

    # Cycles: warm up, measure, cycle, measure again.
    def cycle(n):
        for _ in range(n):
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(daemon.sock)
            s.sendall(OPEN + b'{"op":"close"}\n')
            read_until(s, b'"pong"')
            s.close()

    def settled():
        """The daemon's lasting descriptors once every event loop has handled what came before.
        Connections are spread over the loops, so one probe's pong only says its own loop caught
        up: a probe per possible loop, each answering a ping, and the whole round again (up to
        five times) while a closed connection's descriptor is still there. Every round is a real
        round trip through the daemon, not a wait on the clock. The probes are measured open and
        subtracted."""
        for _ in range(5):
            probes = [Client(daemon.sock) for _ in range(2 * (os.cpu_count() or 1))]
            for p in probes:
                p.barrier()
            fds = daemon.lasting_fds()
            rss = daemon.rss_kib()
            for p in probes:
                p.close()
            if len(fds) - len(probes) <= baseline_fds:
                break
        return fds, len(probes), rss

    cycle(min(2000, cycles))
    baseline_fds = 1 << 30
    fds_before, probes_before, rss_before = settled()
    baseline_fds = len(fds_before) - probes_before
    cycle(cycles)
    fds_after, probes_after, rss_after = settled()
    grown = {fd: t for fd, t in fds_after.items() if fds_before.get(fd) != t}
    checks.check(len(fds_after) - probes_after <= baseline_fds,
                 "file descriptors back to baseline: %d -> %d (new: %s)" % (
                     baseline_fds, len(fds_after) - probes_after, sorted(grown.items())))
    fds_before, fds_after = baseline_fds, len(fds_after) - probes_after
    checks.check(rss_after <= rss_before * 1.10 + 4096, "memory back near baseline: %d KiB -> %d KiB" % (rss_before, rss_after))
    print("held=%d cycles=%d fds %d->%d rss %d->%d KiB" % (hold, cycles, fds_before, fds_after, rss_before, rss_after))
finally:
    checks.check(daemon.stop() == 0, "daemon exits 0")
checks.done()
