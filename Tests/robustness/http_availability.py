#!/usr/bin/env python3
"""The HTTP availability service hanging, refusing, answering garbage or errors: the
field shows "Error contacting server" within the timeout and no session is stuck busy;
404 means available and 2xx taken; {username} is the NFC name as typed, {key} the
identity key.

usage: http_availability.py path/to/signupd
"""
import http.server
import socket
import sys
import threading
import time

from harness import FAST_HASH, Checks, Client, Daemon

checks = Checks("HTTP availability faults")


asked = []


keys_asked = []


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        name = self.path.rsplit("/", 1)[-1]
        if self.path.startswith("/keys/"):
            # A service that knows "bob", asked about the identity key.
            keys_asked.append(name)
            self.send_response(200 if name == "bob" else 404)
            self.end_headers()
            return
        asked.append(name)
        if name.startswith("free"):
            self.send_response(404)
            self.end_headers()
        elif name.startswith("taken"):
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b'{"login":"taken"}')
        elif name.startswith("broken"):
            self.send_response(500)
            self.end_headers()
        elif name.startswith("hang"):
            time.sleep(30)
        elif name.startswith("garbage"):
            self.wfile.write(b"\x00\xffnot http at all\r\n\r\n")
        elif name.startswith("close"):
            self.connection.shutdown(socket.SHUT_RDWR)
        else:
            self.send_response(302)
            self.end_headers()

    def log_message(self, *args):
        pass


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
server.daemon_threads = True
threading.Thread(target=server.serve_forever, daemon=True).start()
port = server.server_address[1]

# A port nothing listens on: connection refused.
probe = socket.socket()
probe.bind(("127.0.0.1", 0))
refused_port = probe.getsockname()[1]
probe.close()

binary = sys.argv[1]
daemon = Daemon(binary, args=FAST_HASH + ["--availability-url", "http://127.0.0.1:%d/users/{username}" % port,
                                          "--availability-timeout", "1"]).start()
keyed = Daemon(binary, args=FAST_HASH + ["--availability-url", "http://127.0.0.1:%d/keys/{key}" % port,
                                         "--availability-timeout", "1"]).start()
refusing = Daemon(binary, args=FAST_HASH + ["--availability-url", "http://127.0.0.1:%d/u/{username}" % refused_port,
                                            "--availability-timeout", "1"]).start()
try:
    c = Client(daemon.sock)
    c.open("signup")
    for name, state, message in [
        ("free1", "ok", "Username available"),
        ("taken1", "failed", "Username already taken"),
        ("broken1", "failed", "Error contacting server"),
        ("garbage1", "failed", "Error contacting server"),
        ("close1", "failed", "Error contacting server"),
        ("redirect1", "failed", "Error contacting server"),
        ("hang1", "failed", "Error contacting server"),
    ]:
        started = time.monotonic()
        c.send("set", field="username", value=name)
        got, _ = c.until(lambda m: m.get("event") == "validation" and m["field"] == "username" and m["state"] in ("ok", "failed"))
        elapsed = time.monotonic() - started
        checks.check((got["state"], got["message"]) == (state, message), "%s: got %s" % (name, got))
        checks.check(elapsed < 1.9, "%s answered within the 1 s timeout (+ slack): %.2f s" % (name, elapsed))

    # The service is asked about the name in NFC, whatever the client sent.
    c.send("set", field="username", value="free\u0075\u0308ser")
    got, _ = c.until(lambda m: m.get("event") == "validation" and m["field"] == "username" and m["state"] in ("ok", "failed"))
    checks.check(got["state"] == "ok" and "free%C3%BCser" in asked, "decomposed name asked as NFC: %s" % asked[-1:])

    # A name the store has is taken without asking the HTTP service.
    c2 = Client(daemon.sock)
    c2.fill_signup("free2", "password")
    result = c2.submit_and_wait()
    checks.check(result.get("ok") is True, "signup with an available name: %s" % result)

    # After a hang, the session is not stuck: it validates and submits normally.
    c.send("set", field="username", value="free3")
    got, _ = c.until(lambda m: m.get("event") == "validation" and m["field"] == "username" and m["state"] == "ok")
    c.send("set", field="password", value="password")
    c.send("set", field="repeatedPassword", value="password")
    result = c.submit_and_wait()
    checks.check(result.get("ok") is True and result.get("user") == "free3", "no session stuck after a hang: %s" % result)
    snapshot = c.barrier()
    busy = [m for m in snapshot if m.get("event") == "busy"]
    checks.check(not busy or busy[-1]["value"] is False, "not busy after the result")

    # The service knows "bob". Asked with {username} it sees the NFC name as typed (BOB);
    # asked with {key}, the identity key: every spelling of bob is taken.
    c = Client(daemon.sock)
    c.open("signup")
    c.send("set", field="username", value="freeBOB")
    got, _ = c.until(lambda m: m.get("event") == "validation" and m["field"] == "username" and m["state"] in ("ok", "failed"))
    checks.check(asked[-1] == "freeBOB", "{username} is the NFC name as typed, case kept: %s" % asked[-1:])
    k = Client(keyed.sock)
    k.open("signup")
    for name in ["BOB", "\uff42\uff4f\uff42", "\U0001d41b\U0001d428\U0001d41b", "bob"]:
        k.send("set", field="username", value=name)
        got, _ = k.until(lambda m: m.get("event") == "validation" and m["field"] == "username" and m["state"] in ("ok", "failed"))
        checks.check((got["state"], got["message"]) == ("failed", "Username already taken"),
                     "{key}: %r is bob to the service: %s (asked %s)" % (name, got, keys_asked[-1:]))
    k.send("set", field="username", value="Alice")
    got, _ = k.until(lambda m: m.get("event") == "validation" and m["field"] == "username" and m["state"] in ("ok", "failed"))
    checks.check(got["state"] == "ok" and keys_asked[-1] == "alice", "{key} is case-folded: %s" % keys_asked[-1:])

    r = Client(refusing.sock)
    r.open("signup")
    started = time.monotonic()
    r.send("set", field="username", value="anyone")
    got, _ = r.until(lambda m: m.get("event") == "validation" and m["state"] in ("ok", "failed"))
    checks.check(got["message"] == "Error contacting server", "connection refused: %s" % got)
    checks.check(time.monotonic() - started < 1.9, "connection refused answered in time")
finally:
    checks.check(daemon.stop() == 0, "daemon exits 0")
    checks.check(refusing.stop() == 0, "second daemon exits 0")
    checks.check(keyed.stop() == 0, "daemon with {key} exits 0")
checks.done()
