#!/usr/bin/env python3
"""The HTTP availability service hanging, refusing, answering garbage or errors: the
field shows "Error contacting server" within the timeout and no session is stuck busy;
404 means available and 2xx taken; {username} is the NFC name as typed, {key} the
identity key.

usage: http_availability.py path/to/signupd
"""
import http.server
import socket
import subprocess
import sys
import threading
import time

from harness import FAST_HASH, Checks, Client, Daemon, QuietHandler, serve_http

checks = Checks("HTTP availability faults")


asked = []


keys_asked = []


class Handler(QuietHandler):
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


port = serve_http(Handler).server_address[1]

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
# Its first failure a hang: nothing else has marked the service unreachable yet.
timing_out = Daemon(binary, args=FAST_HASH + ["--availability-url", "http://127.0.0.1:%d/users/{username}" % port,
                                              "--availability-timeout", "1"]).start()


def settled(client, name):
    client.send("set", field="username", value=name)
    got, _ = client.until(lambda m: m.get("event") == "validation" and m["field"] == "username" and m["state"] in ("ok", "failed"))
    return got["state"], got["message"]


def log_lines(daemon, text, count=1, seconds=10):
    """The daemon's log lines holding `text`, once there are `count` (polled: the log is
    written as the check ends, the client may hear first)."""
    deadline = time.monotonic() + seconds
    while True:
        lines = [line for line in daemon.log().splitlines() if text in line]
        if len(lines) >= count or time.monotonic() > deadline:
            return lines
        time.sleep(0.05)


try:
    t = Client(timing_out.sock)
    t.open("signup")
    checks.check(settled(t, "hang9") == ("failed", "Error contacting server"), "a hung service: Error contacting server")
    lines = log_lines(timing_out, "availability service unreachable")
    checks.check(len(lines) == 1 and "no answer within 1 s" in lines[0] and "warning" in lines[0],
                 "a check that timed out is logged as a warning with the reason: %s" % lines)
    # Another cause while it is still unreachable: logged once, not once per keystroke.
    for name in ["broken9", "broken10", "hang10"]:
        checks.check(settled(t, name) == ("failed", "Error contacting server"), "%s: Error contacting server" % name)
    lines = log_lines(timing_out, "still unreachable, for another reason")
    checks.check(len(lines) == 1 and "HTTP 500" in lines[0] and "no answer within 1 s" in lines[0],
                 "a new cause is logged once, naming the one before: %s" % lines)
    checks.check(settled(t, "free9") == ("ok", "Username available"), "the service answers again")
    lines = log_lines(timing_out, "availability service answers again")
    checks.check(len(lines) == 1 and "no answer within 1 s" in lines[0],
                 "the recovery notice names the latest cause (the last hang): %s" % lines)
    checks.check(len(log_lines(timing_out, "still unreachable", seconds=0)) == 1, "no warning per keystroke")

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

    garbage = log_lines(daemon, "cause=the service's answer is not HTTP")
    checks.check(len(garbage) == 1 and "invalid constant string" not in daemon.log(),
                 "a garbage answer is logged as not HTTP: %s" % garbage)

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
    refused_at = time.monotonic()
    # Fail fast: for 1 s after a refused connection, checks answer without connecting, even
    # once something listens there again; after it, the service is asked again.
    revived_asked = []

    class Revived(QuietHandler):
        def do_GET(self):
            revived_asked.append(self.path)
            self.send_response(404)
            self.end_headers()

    revived = http.server.ThreadingHTTPServer(("127.0.0.1", refused_port), Revived)
    revived.daemon_threads = True
    threading.Thread(target=revived.serve_forever, daemon=True).start()
    got = settled(r, "anyone2")
    within = time.monotonic() - refused_at
    checks.check(within < 1.0 and got == ("failed", "Error contacting server") and revived_asked == [],
                 "within the back-off (%.2f s): answered without connecting: %s, asked %s" % (within, got, revived_asked))
    time.sleep(max(0.0, 1.2 - (time.monotonic() - refused_at)))  # the documented 1 s back-off runs out
    checks.check(settled(r, "anyone3") == ("ok", "Username available") and len(revived_asked) == 1,
                 "after the back-off the service is asked again: %s" % revived_asked)
    lines = log_lines(refusing, "availability service answers again")
    checks.check(len(lines) == 1 and "connection refused" in lines[0], "the recovery is logged: %s" % lines)
    revived.shutdown()
finally:
    checks.check(daemon.stop() == 0, "daemon exits 0")
    checks.check(timing_out.stop() == 0, "daemon with the timing-out service exits 0")
    checks.check(refusing.stop() == 0, "second daemon exits 0")
    checks.check(keyed.stop() == 0, "daemon with {key} exits 0")

# A malformed URL, or one with a password in it, is a usage error (exit 64) that does not
# repeat the password.
for template, says in [("http://127.0.0.1:99999/u/{key}", "bad port"), ("http://127.0.0.1/u/", "{username} or {key}"),
                       ("http://admin:s3cret@127.0.0.1:%d/u/{key}" % port, "user name or password in the URL")]:
    run = subprocess.run([binary, "--socket", "/nonexistent/s.sock", "--database", ":memory:", "--availability-url", template],
                         env={"PATH": "/usr/bin:/bin"}, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60, text=True)
    checks.check(run.returncode == 64 and says in run.stderr and "s3cret" not in run.stderr + run.stdout,
                 "%s refused at start: exit %d %s" % (says, run.returncode, run.stderr.strip()[-200:]))
checks.done()
