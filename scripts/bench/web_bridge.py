#!/usr/bin/env python3
"""The web bridge's costs, measured beside the direct Unix socket in one run (release builds):

  1. a keystroke's round trip — `set` on a session until its `validation` arrives — through
     signupd-web's WebSocket and straight on signupd's socket, interleaved, p50/p99 and the
     ratio;
  2. memory per idle browser flow: N WebSockets (each a visitor of its own address, through a
     trusted proxy, each with a sign-up form open), signupd-web's and signupd's RSS before
     and after, per flow.

  python3 scripts/bench/web_bridge.py SIGNUPD SIGNUPD_WEB [--keystrokes 1000] [--flows 10000]

Prints Markdown for BENCHMARKS.md. Figures, never assertions.
"""
import json
import os
import resource
import shutil
import socket
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "Tests", "web"))
from bridge_harness import Bridge  # noqa: E402
from wsclient import WebSocket  # noqa: E402

signupd, signupd_web = sys.argv[1], sys.argv[2]
keystrokes = int(sys.argv[sys.argv.index("--keystrokes") + 1]) if "--keystrokes" in sys.argv else 1000
flows = int(sys.argv[sys.argv.index("--flows") + 1]) if "--flows" in sys.argv else 10000
hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))  # inherited by both daemons too


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


class Direct:
    """signupd's own socket, NDJSON."""

    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.connect(path)
        self.reader = self.sock.makefile("rb")
        self.reader.readline()  # hello

    def send(self, request):
        self.sock.sendall(json.dumps(request).encode() + b"\n")

    def next_event(self, name):
        while True:
            message = json.loads(self.reader.readline())
            if message.get("event") == name:
                return message


def keystroke(client, session, value):
    start = time.perf_counter()
    client.send({"op": "set", "session": session, "field": "repeatedPassword", "value": value})
    client.next_event("validation")
    return time.perf_counter() - start


def percentile(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(len(values) * p))]


work = tempfile.mkdtemp(prefix="signupd-web-bench-")
bridge = Bridge(signupd, signupd_web, work,
                daemon_args=["--database", ":memory:", "--max-connections", str(2 * flows + 1024), "--max-connections-per-bridge", str(flows + 512)],
                web_args=["--trusted-proxy", "127.0.0.1", "--max-connections", str(flows + 1024)])
try:
    # ---- 1. a keystroke's round trip, both ways, interleaved
    direct = Direct(bridge.socket)
    direct.send({"op": "open", "form": "signup", "id": 1})
    direct_session = direct.next_event("opened")["session"]
    web = WebSocket(bridge.port, origin=bridge.origin, forwarded_for="198.51.100.1")
    web.next_event("hello")
    web.send({"op": "open", "form": "signup", "id": 1})
    web_session = web.next_event("opened")["session"]
    for client, session in ((direct, direct_session), (web, web_session)):
        client.send({"op": "set", "session": session, "field": "password", "value": "correct horse battery"})
    # Alternating values: each changes the repeat's verdict, so each answers with a validation.
    values = ["correct horse battery", "correct horse batter"]
    for n in range(100):  # warm-up, within the bridge's burst
        keystroke(direct, direct_session, values[n % 2])
        keystroke(web, web_session, values[n % 2])
    time.sleep(5)  # the bridge's budget refills (50 a second) before the measured run
    times = {"direct": [], "bridge": []}
    # Paced as a fast typist types, 40 keys a second: the bridge reads a page's messages at
    # up to 50 a second after a burst, and a benchmark must not measure that pacing.
    next_at = time.monotonic()
    for n in range(keystrokes):
        # Each goes first every other time: the first after a pause pays the wake-ups.
        pair = [("direct", direct, direct_session), ("bridge", web, web_session)]
        for name, client, session in (pair if n % 2 == 0 else pair[::-1]):
            times[name].append(keystroke(client, session, values[n % 2]))
        next_at += 0.025
        time.sleep(max(0.0, next_at - time.monotonic()))  # pacing the load, not synchronising
    d50, d99 = percentile(times["direct"], 0.5) * 1e6, percentile(times["direct"], 0.99) * 1e6
    b50, b99 = percentile(times["bridge"], 0.5) * 1e6, percentile(times["bridge"], 0.99) * 1e6
    print("| keystroke round trip (`set` → `validation`), %d each, interleaved | p50 | p99 |" % keystrokes)
    print("|---|---:|---:|")
    print("| signupd's Unix socket | %.0f µs | %.0f µs |" % (d50, d99))
    print("| through signupd-web's WebSocket | %.0f µs | %.0f µs |" % (b50, b99))
    print("| ratio | %.2f× | %.2f× |" % (b50 / d50, b99 / d99))
    print()

    # ---- 2. memory per idle browser flow. Each flow holds two descriptors in a bridge (the
    # browser's and signupd's); where the hard limit of open files (here 20,000) is below what
    # one process would need, the flows are shared by two bridges.
    webs = [(bridge.web, bridge.port)]
    if 2 * flows + 64 > hard:
        webs.append(bridge.start_web(signupd_web, ["--trusted-proxy", "127.0.0.1", "--max-connections", str(flows + 1024)]))
    web_before, daemon_before = sum(rss_kib(w.pid) for w, _ in webs), rss_kib(bridge.daemon.pid)
    held = []
    start = time.monotonic()
    for n in range(flows):
        process, port = webs[n % len(webs)]
        ws = WebSocket(port, origin="http://127.0.0.1:%d" % port, forwarded_for="10.%d.%d.%d" % (n >> 16 & 255, n >> 8 & 255, n & 255 or 1), timeout=60)
        hello = ws.next_event("hello")
        ws.send({"op": "open", "form": "signup", "id": 1})
        if hello is None or ws.next_event("opened") is None:
            raise SystemExit("flow %d was refused: %s (signupd-web's WebSocket status %d)" % (n, hello, ws.status))
        held.append(ws)
    opened = time.monotonic() - start
    web_after, daemon_after = sum(rss_kib(w.pid) for w, _ in webs), rss_kib(bridge.daemon.pid)
    print("| %d idle browser flows (a WebSocket each, a sign-up form open; %d signupd-web process%s), opened in %.1f s | before | after | per flow |"
          % (flows, len(webs), "es" if len(webs) > 1 else "", opened))
    print("|---|---:|---:|---:|")
    print("| signupd-web RSS | %.1f MiB | %.1f MiB | %.1f KiB |" % (web_before / 1024, web_after / 1024, (web_after - web_before) / flows))
    print("| signupd RSS | %.1f MiB | %.1f MiB | %.1f KiB |" % (daemon_before / 1024, daemon_after / 1024, (daemon_after - daemon_before) / flows))
    print("| both | | | %.1f KiB |" % ((web_after - web_before + daemon_after - daemon_before) / flows))
    for ws in held:
        ws.close()
    for process, _ in webs[1:]:
        process.terminate()
        process.wait(timeout=30)
finally:
    bridge.stop()
    shutil.rmtree(work, ignore_errors=True)
