#!/usr/bin/env python3
"""signupd-web against hostile visitors, from outside, over real sockets.

The bridge runs behind a "proxy" (the test itself, trusted with --trusted-proxy 127.0.0.1),
so that each visitor is an address of its own (X-Forwarded-For), as behind nginx:

  1. a page from another origin, or none, cannot open the WebSocket (403);
  2. a frame over the limit closes that WebSocket (1009) and nobody else's;
  3. one address holds at most --max-websockets-per-address WebSockets (an IPv6 /64 as one),
     and forging X-Forwarded-For from an untrusted peer buys nothing;
  4. a visitor flooding `set` frames, and one that stops reading, leave another visitor's
     keystrokes answered promptly (its round trip printed);
  5. bad requests are refused with the documented status: no CSRF token 403, a cross-site POST
     with a planted cookie 403, an oversized body 413, a made-up login claim 403; ops page
     script may not use, `forbidden`;
  6. the bridge's memory after the floods;
  7. slow clients: a head or a body trickled a byte at a time is closed at the request
     timeout, a malformed request is answered 400 and closed, one peer address holds at most
     --max-connections-per-address connections.

  python3 Tests/web/hostile_visitor.py SIGNUPD SIGNUPD_WEB
"""
import os
import multiprocessing
import re
import shutil
import socket
import sys
import tempfile
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "robustness"))
sys.path.insert(0, os.path.dirname(__file__))
from harness import Checks  # noqa: E402
from wsclient import WebSocket  # noqa: E402
from bridge_harness import Bridge  # noqa: E402

signupd, signupd_web = sys.argv[1], sys.argv[2]
checks = Checks("hostile visitor")
work = tempfile.mkdtemp(prefix="signupd-web-hostile-")
PER_ADDRESS = 8
bridge = Bridge(signupd, signupd_web, work, daemon_args=["--database", ":memory:"],
                web_args=["--trusted-proxy", "127.0.0.1", "--max-websockets-per-address", str(PER_ADDRESS)])
web, port = bridge.web, bridge.port
origin = "http://127.0.0.1:%d" % port


def visitor(address, **kw):
    return WebSocket(port, origin=origin, forwarded_for=address, **kw)


def opened(ws, form="signup"):
    checks.check(ws.next_event("hello") is not None, "hello")
    ws.send({"op": "open", "form": form, "id": "o"})
    event = ws.next_event("opened")
    checks.check(event is not None, "open")
    return event["session"]


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as status:
        return int(re.search(r"VmRSS:\s+(\d+)", status.read()).group(1))


def keystroke_round_trips(ws, session, count):
    """`set` then `ping`; the time until the pong, each."""
    times = []
    for n in range(count):
        start = time.monotonic()
        ws.send({"op": "set", "session": session, "field": "password", "value": "x" * (n % 7 + 1)})
        ws.send({"op": "ping", "id": n})
        checks.check(ws.next_event("pong") is not None, "pong")
        times.append(time.monotonic() - start)
    times.sort()
    return times[len(times) // 2], times[-1]


try:
    # ---- 1. origins
    checks.check(WebSocket(port, origin="https://evil.example").status == 403, "another origin's page: 403")
    checks.check(WebSocket(port).status == 403, "no Origin at all: 403")
    checks.check(WebSocket(port, origin="http://127.0.0.1:%d.evil.example" % port).status == 403, "an origin that only starts like ours: 403")

    # ---- 2. an oversized frame ends that WebSocket only
    victim = visitor("198.51.100.1")
    victim_session = opened(victim)
    big = visitor("203.0.113.66")
    opened(big)
    big.send(raw=b'{"op":"ping","pad":"' + b"x" * 70_000 + b'"}')
    opcode, payload = big.receive()
    while opcode == 1:
        opcode, payload = big.receive()
    code = int.from_bytes(payload[:2], "big") if opcode == 8 and payload else None
    checks.check(opcode in (8, None), "a 70,000-byte frame ends the WebSocket (opcode %s)" % opcode)
    print("  a 70,000-byte frame: WebSocket closed with code %s" % code)
    checks.check(keystroke_round_trips(victim, victim_session, 3)[1] < 5, "the other visitor goes on")

    # ---- 3. WebSockets per address
    held = [visitor("203.0.113.7") for _ in range(PER_ADDRESS)]
    checks.check(all(ws.status == 101 for ws in held), "%d WebSockets from one address" % PER_ADDRESS)
    checks.check(visitor("203.0.113.7").status == 403, "one more from that address: 403")
    six = [visitor("2001:db8:7:7::%x" % n) for n in range(1, PER_ADDRESS + 1)]
    checks.check(all(ws.status == 101 for ws in six), "an IPv6 /64's share")
    checks.check(visitor("2001:db8:7:7:ffff::1").status == 403, "the same /64 under another address: 403")
    checks.check(visitor("2001:db8:7:8::1").status == 101, "the next /64 is someone else")
    for ws in held + six:
        ws.close()
    # From an untrusted peer X-Forwarded-For means nothing: the peer's own address counts.
    # (A second bridge, trusting nobody, stands in for a peer the first one does not trust.)
    plain, plain_port = bridge.start_web(signupd_web, ["--max-websockets-per-address", "2"])
    forged = [WebSocket(plain_port, origin="http://127.0.0.1:%d" % plain_port, forwarded_for="192.0.2.%d" % n) for n in range(3)]
    checks.check([ws.status for ws in forged] == [101, 101, 403], "forged X-Forwarded-For from an untrusted peer buys nothing: %s" % [ws.status for ws in forged])
    for ws in forged:
        ws.close()
    plain.terminate()
    plain.wait(timeout=10)

    # ---- 4. floods: sets as fast as a socket takes them, and a visitor that stops reading
    idle_p50, idle_max = keystroke_round_trips(victim, victim_session, 30)
    rss_before = rss_kib(web.pid)
    # Processes of their own: the victim's times are not the flooders' share of one interpreter.
    stop = multiprocessing.Event()

    def flood(address):
        ws = visitor(address)
        session = opened(ws)
        n = 0
        while not stop.is_set():
            ws.send({"op": "set", "session": session, "field": "username", "value": "flood%d" % n})
            n += 1
        ws.close()

    def deaf(address):
        ws = visitor(address)
        ws.next_event("hello")
        for n in range(3000):
            ws.send({"op": "describe", "id": n})
        stop.wait(60)
        ws.close()

    flooders = [multiprocessing.Process(target=flood, args=("203.0.113.%d" % n,), daemon=True) for n in range(10, 14)]
    flooders += [multiprocessing.Process(target=deaf, args=("203.0.113.%d" % n,), daemon=True) for n in range(20, 24)]
    for thread in flooders:
        thread.start()
    busy_p50, busy_max = keystroke_round_trips(victim, victim_session, 30)
    rss_during = rss_kib(web.pid)
    stop.set()
    for thread in flooders:
        thread.join(timeout=30)
        thread.kill()
    print("  another visitor's keystroke round trip: idle p50 %.1f ms, max %.1f ms; while 4 flood sets and 4 stop reading: p50 %.1f ms, max %.1f ms"
          % (idle_p50 * 1000, idle_max * 1000, busy_p50 * 1000, busy_max * 1000))
    print("  signupd-web RSS: %d KiB before the floods, %d KiB during" % (rss_before, rss_during))
    checks.check(busy_p50 < 0.5, "the floods leave another visitor answered promptly (p50 %.0f ms)" % (busy_p50 * 1000))

    # ---- 5. bad requests
    def status_of(path, data=None, headers=None):
        try:
            with urllib.request.urlopen(urllib.request.Request(origin + path, data=data, headers=headers or {}), timeout=30) as answer:
                return answer.status
        except urllib.error.HTTPError as error:
            return error.code

    checks.check(status_of("/signup", b"username=a&password=b") == 403, "a POST without the CSRF cookie and token: 403")
    checks.check(status_of("/signup", b"csrf=" + b"0" * 32, {"Cookie": "signupd_csrf=" + "1" * 32}) == 403, "a POST whose token does not match its cookie: 403")
    checks.check(status_of("/signup", b"x" * 20_000, {"Content-Type": "application/x-www-form-urlencoded"}) == 413, "a 20,000-byte body: 413")
    cookie = "signupd_csrf=%s; signupd_flow=%s" % ("2" * 32, "3" * 32)
    checks.check(status_of("/session", ("csrf=%s&claim=%s" % ("2" * 32, "4" * 32)).encode(), {"Cookie": cookie}) == 403, "a made-up login claim: 403")
    checks.check(status_of("/whoami", headers={"Cookie": "signupd_token=forged"}) == 401, "a forged token cookie: 401")
    # A page of another site posting with a token it planted as a cookie too: refused by Origin.
    planted = {"Cookie": "signupd_csrf=%s" % ("5" * 32), "Content-Type": "application/x-www-form-urlencoded"}
    body = ("csrf=%s&username=alice&password=x" % ("5" * 32)).encode()
    checks.check(status_of("/login", body, dict(planted, Origin="https://evil.example")) == 403, "a cross-site POST with a planted CSRF cookie: 403")
    checks.check(status_of("/login", body, dict(planted, **{"Sec-Fetch-Site": "cross-site"})) == 403, "a cross-site POST without Origin (Sec-Fetch-Site): 403")
    checks.check(status_of("/login", body, dict(planted, Origin=origin)) in (200, 422), "the same POST from the page's own origin is taken (a wrong password: 422)")
    checks.check(status_of("/../../etc/passwd") == 404 and status_of("/static/../Package.swift") == 404, "paths outside the pages: 404")
    victim.send({"op": "sessions", "id": "s"})
    refusal = victim.next_event("error")
    checks.check(refusal["code"] == "forbidden" and refusal["id"] == "s", "ops not for page script: forbidden")
    victim.send(raw=b"\x00\x01", opcode=2)
    checks.check(victim.next_event("error")["code"] == "invalid_request", "a binary frame: invalid_request")
    checks.check(keystroke_round_trips(victim, victim_session, 3)[1] < 5, "and the visitor goes on")
    # ---- 7. slow clients (slowloris): a bridge with a 2-second request timeout
    slow, slow_port = bridge.start_web(signupd_web, ["--request-timeout", "2", "--max-connections-per-address", "20"])

    def closed_after(sock, trickle):
        """Seconds until the bridge closes `sock` while it sends `trickle` a byte at a time."""
        start = time.monotonic()
        sock.settimeout(0.5)
        for byte in trickle:
            try:
                sock.sendall(bytes([byte]))
                if sock.recv(4096) == b"":
                    return time.monotonic() - start
            except socket.timeout:
                continue  # nothing to read yet: the bridge still holds it (paced by the timeout)
            except OSError:
                return time.monotonic() - start
        return None

    head = socket.create_connection(("127.0.0.1", slow_port))
    took = closed_after(head, b"GET / HTTP/1.1\r\nHost: x\r\n" + b"X-Slow: " + b"a" * 100)
    checks.check(took is not None and took < 6, "a request head trickled a byte at a time is closed at the timeout: %s s" % took)
    post = socket.create_connection(("127.0.0.1", slow_port))
    post.sendall(b"POST /signup HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 1000\r\n\r\n")
    took = closed_after(post, b"a" * 100)
    checks.check(took is not None and took < 6, "a body trickled a byte at a time is closed at the timeout: %s s" % took)
    print("  slow clients: a trickled head and a trickled body closed at the 2-second request timeout")
    bad = socket.create_connection(("127.0.0.1", slow_port))
    bad.settimeout(5)
    bad.sendall(b"GARBAGE / HTTP/9.9\r\n\r\n")
    answer = b""
    try:
        while True:
            chunk = bad.recv(4096)
            if not chunk:
                break
            answer += chunk
    except socket.timeout:
        answer += b"[still open]"
    checks.check(answer.startswith(b"HTTP/1.1 400") and not answer.endswith(b"[still open]"), "a malformed request: 400, then closed: %r" % answer[:40])
    held = [socket.create_connection(("127.0.0.1", slow_port)) for _ in range(20)]
    extra = socket.create_connection(("127.0.0.1", slow_port))
    extra.settimeout(5)
    try:
        refused = extra.recv(1) == b""
    except (socket.timeout, ConnectionResetError):
        refused = True
    checks.check(refused, "one peer address past --max-connections-per-address is closed at once")
    for sock in held + [extra, head, post, bad]:
        sock.close()
    slow.terminate()
    slow.wait(timeout=10)
    checks.check(web.poll() is None and bridge.daemon.poll() is None, "signupd-web and signupd still run")
finally:
    bridge.stop()
    shutil.rmtree(work, ignore_errors=True)

checks.done()
