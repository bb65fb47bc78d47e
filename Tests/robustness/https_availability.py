#!/usr/bin/env python3
"""https:// availability URLs against a real daemon and a Python https service, with a
throwaway CA made by openssl:
 1. with --availability-ca-file the check answers taken/available over TLS (SNI and the
    Host header name the URL's host);
 2. keep-alive: many checks ride one or two TLS connections (handshakes counted by the
    service);
 3. a certificate for another host name — or one naming only the address the host
    resolves to — is "Error contacting server", no request reaches that server, the
    reason is logged once and the daemon goes on; so is a plain http service behind an
    https:// URL;
 4. without the CA file the system's trust store does not know the CA: "Error contacting
    server", logged once;
 5. a superseded check over https is aborted: the service sees its connection closed long
    before the timeout, and the pool slot is free again (more superseded checks than the
    pool's 16 connections, then a check still answers);
 6. a missing, unreadable or non-PEM CA file is a startup error naming it (exit 1); the
    option with an http:// URL is a usage error (exit 64).

usage: https_availability.py path/to/signupd
"""
import atexit
import http.server
import os
import select
import shutil
import socket
import ssl
import struct
import subprocess
import sys
import tempfile
import threading
import time

from harness import FAST_HASH, Checks, Client, Daemon

checks = Checks("https availability")
binary = sys.argv[1]
work = tempfile.mkdtemp(prefix="signupd-tls-")
atexit.register(shutil.rmtree, work, ignore_errors=True)


def openssl(*args):
    subprocess.run(["openssl"] + list(args), check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def path(name):
    return os.path.join(work, name)


# A throwaway CA and three server certificates it signs.
openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=signupd test CA",
        "-keyout", path("ca.key"), "-out", path("ca.pem"),
        "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign")


def server_certificate(name, san):
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=%s" % name.split(":")[-1],
            "-keyout", path(name + ".key"), "-out", path(name + ".csr"))
    with open(path(name + ".ext"), "w") as f:
        f.write("subjectAltName=%s\nextendedKeyUsage=serverAuth\n" % san)
    openssl("x509", "-req", "-in", path(name + ".csr"), "-CA", path("ca.pem"), "-CAkey", path("ca.key"),
            "-CAcreateserial", "-days", "2", "-extfile", path(name + ".ext"), "-out", path(name + ".pem"))
    return path(name + ".pem"), path(name + ".key")


good = server_certificate("localhost", "DNS:localhost")
other = server_certificate("elsewhere", "DNS:elsewhere.invalid")
# Names only 127.0.0.1, the address localhost resolves to: not the host written in the URL.
address_only = server_certificate("address", "IP:127.0.0.1")


def dated_certificate(name, start, end):
    """A certificate for localhost valid only from `start` to `end` (openssl ca can date it)."""
    db = path("cadb-" + name)
    os.makedirs(db)
    open(os.path.join(db, "index.txt"), "w").close()
    with open(os.path.join(db, "serial"), "w") as f:
        f.write("1000\n")
    with open(path(name + ".cnf"), "w") as f:
        f.write("[ca]\ndefault_ca=c\n[c]\ndir=%s\ndatabase=%s/index.txt\nserial=%s/serial\nnew_certs_dir=%s\n"
                "default_md=sha256\npolicy=p\ncopy_extensions=copy\n[p]\ncommonName=supplied\n" % (db, db, db, db))
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost",
            "-keyout", path(name + ".key"), "-out", path(name + ".csr"))
    openssl("ca", "-batch", "-config", path(name + ".cnf"), "-cert", path("ca.pem"), "-keyfile", path("ca.key"),
            "-in", path(name + ".csr"), "-out", path(name + ".pem"), "-startdate", start, "-enddate", end, "-notext")
    return path(name + ".pem"), path(name + ".key")


expired = dated_certificate("expired", "20240101000000Z", "20240201000000Z")
not_yet = dated_certificate("notyet", "20990101000000Z", "20990201000000Z")


class Service:
    """An https availability service: free* → 404, taken* → 200, slow* → waits for the
    client to close (records whether it did). Counts TLS handshakes and requests."""

    def __init__(self, certificate):
        self.lock = threading.Lock()
        self.handshakes = 0
        self.failed_handshakes = 0
        self.requests = []
        self.hosts = []
        self.server_names = []
        self.slow_arrived = threading.Event()
        self.slow_closed = []  # seconds from the request to the client's close, or None
        self.slow_done = threading.Semaphore(0)
        self.release_hung = threading.Event()
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(*certificate)
        context.sni_callback = lambda sock, name, ctx: self.server_names.append(name)
        service = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def setup(self):
                try:
                    self.request.do_handshake()
                except (ssl.SSLError, OSError):
                    with service.lock:
                        service.failed_handshakes += 1
                    raise
                with service.lock:
                    service.handshakes += 1
                super().setup()

            def do_GET(self):
                name = self.path.rsplit("/", 1)[-1]
                with service.lock:
                    service.requests.append(name)
                    service.hosts.append(self.headers.get("Host"))
                if name.startswith("slow"):
                    service.slow_arrived.set()
                    started = time.monotonic()
                    closed = None
                    while time.monotonic() - started < 8:
                        readable, _, _ = select.select([self.connection], [], [], 0.5)
                        if readable:
                            try:
                                data = self.connection.recv(1)
                            except (ssl.SSLError, OSError):
                                data = b""
                            if not data:
                                closed = time.monotonic() - started
                                break
                    with service.lock:
                        service.slow_closed.append(closed)
                    service.slow_done.release()
                    # A hung service: it keeps its end open. The daemon must not wait for it
                    # (TLS's close_notify reply) to free the pool slot.
                    service.release_hung.wait(30)
                    self.close_connection = True
                    return
                self.send_response(200 if name.startswith("taken") else 404)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        class Server(http.server.ThreadingHTTPServer):
            daemon_threads = True

            def get_request(self):
                sock, address = self.socket.accept()
                # The handshake runs on the request's thread (Handler.setup), not the accept loop.
                return context.wrap_socket(sock, server_side=True, do_handshake_on_connect=False), address

            def handle_error(self, request, client_address):
                pass  # failed handshakes are counted, not printed

        self.server = Server(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def url(self, host="localhost"):
        return "https://%s:%d/users/{username}" % (host, self.port)


def answer(client, name):
    client.send("set", field="username", value=name)
    got, _ = client.until(lambda m: m.get("event") == "validation" and m["field"] == "username" and m["state"] in ("ok", "failed"))
    return got["state"], got["message"]


def unreachable_lines(daemon):
    return [line for line in daemon.log().splitlines() if "availability service unreachable" in line]


def unreachable_and_logged(daemon, name, label):
    """A name typed into a new signup form through `daemon` gets "Error contacting server";
    returns the daemon's log lines saying the service is unreachable."""
    c = Client(daemon.sock)
    c.open("signup")
    checks.check(answer(c, name) == ("failed", "Error contacting server"), label)
    return unreachable_lines(daemon)


service = Service(good)
wrong_name = Service(other)
wrong_address = Service(address_only)
ca = ["--availability-ca-file", path("ca.pem")]

trusted = Daemon(binary, args=FAST_HASH + ["--availability-url", service.url(), "--availability-timeout", "10"] + ca).start()
impostor = Daemon(binary, args=FAST_HASH + ["--availability-url", wrong_name.url(), "--availability-timeout", "2"] + ca).start()
by_address = Daemon(binary, args=FAST_HASH + ["--availability-url", wrong_address.url(), "--availability-timeout", "2"] + ca).start()
class Quiet(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass


plain = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
plain.daemon_threads = True
threading.Thread(target=plain.serve_forever, daemon=True).start()
plain_http = Daemon(binary, args=FAST_HASH + ["--availability-url", "https://localhost:%d/u/{username}" % plain.server_address[1],
                                              "--availability-timeout", "2"] + ca).start()
address_url = Daemon(binary, args=FAST_HASH + ["--availability-url", wrong_address.url("127.0.0.1"), "--availability-timeout", "2"] + ca).start()
system_store = Daemon(binary, args=FAST_HASH + ["--availability-url", service.url(), "--availability-timeout", "2"]).start()
try:
    # ---- 1. answers over TLS
    c = Client(trusted.sock)
    c.open("signup")
    checks.check(answer(c, "free1") == ("ok", "Username available"), "free1 over https")
    checks.check(answer(c, "taken1") == ("failed", "Username already taken"), "taken1 over https")
    checks.check(service.server_names[-1:] == ["localhost"], "SNI names the URL's host: %s" % service.server_names)
    checks.check(service.hosts[-1] == "localhost:%d" % service.port, "Host header: %s" % service.hosts[-1:])
    checks.check("trust" in trusted.log() and path("ca.pem") in trusted.log(), "the start log says where trust comes from")

    # ---- 2. keep-alive over TLS: 40 checks, one after another, on one or two connections
    before_handshakes, before_requests = service.handshakes, len(service.requests)
    for n in range(40):
        state = answer(c, "freekeepalive%d" % n if n % 2 else "takenkeepalive%d" % n)
        checks.check(state[0] == ("ok" if n % 2 else "failed"), "keep-alive check %d: %s" % (n, state))
    handshakes = service.handshakes - before_handshakes
    requests = len(service.requests) - before_requests
    print("  40 checks over https: %d requests, %d new TLS handshakes" % (requests, handshakes))
    checks.check(requests == 40, "every check asked the service once: %d" % requests)
    checks.check(handshakes <= 2, "kept-alive TLS connections are reused: %d handshakes for 40 checks" % handshakes)

    # ---- 3. a certificate for another name: no answer, no request sent, logged once
    for daemon, other_service, why in [(impostor, wrong_name, "another host name"), (by_address, wrong_address, "only the address")]:
        i = Client(daemon.sock)
        i.open("signup")
        for name in ["freea", "freeb", "takenc"]:
            checks.check(answer(i, name) == ("failed", "Error contacting server"), "certificate for %s: %s" % (why, name))
        checks.check(other_service.requests == [], "no request reached the server whose certificate names %s: %s" % (why, other_service.requests))
        lines = unreachable_lines(daemon)
        checks.check(len(lines) == 1 and "does not name localhost" in lines[0], "certificate for %s logged once with the reason: %s" % (why, lines))
        names = "it names elsewhere.invalid" if other_service is wrong_name else "it names 127.0.0.1"
        checks.check(names in lines[0], "the log says which names the certificate carries (%s): %s" % (names, lines))
        checks.check("BEGIN" not in daemon.log() and ".build/checkouts" not in daemon.log(), "no certificate or build path in the log")
        pong, _ = i.reply(i.send("ping"))
        checks.check(pong.get("event") == "pong", "daemon fine after a certificate for %s: %s" % (why, pong))
    # An https URL pointing at a plain http service: no answer, and the log says why.
    lines = unreachable_and_logged(plain_http, "freep", "https URL, plain http service")
    checks.check(len(lines) == 1 and "does not speak TLS" in lines[0], "plain http behind an https URL logged with the reason: %s" % lines)
    # An http URL pointing at a TLS service that resets a connection speaking plain HTTP to
    # it (as many do): the log says to use https://.
    resetting = socket.socket()
    resetting.bind(("127.0.0.1", 0))
    resetting.listen(4)

    def reset_each():
        while True:
            try:
                connection, _ = resetting.accept()
            except OSError:
                return
            connection.recv(4096)
            connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            connection.close()

    threading.Thread(target=reset_each, daemon=True).start()
    tls_behind_http = Daemon(binary, args=FAST_HASH + ["--availability-url", "http://127.0.0.1:%d/users/{username}" % resetting.getsockname()[1],
                                                       "--availability-timeout", "2"]).start()
    lines = unreachable_and_logged(tls_behind_http, "freeh", "http URL, TLS service")
    checks.check(len(lines) == 1 and "use https://" in lines[0] and "errno" not in lines[0],
                 "a TLS service behind an http URL logged with advice: %s" % lines)
    checks.check(tls_behind_http.stop() == 0, "daemon exits 0")
    resetting.close()
    # The same address-only certificate is right for a URL that names the address.
    a = Client(address_url.sock)
    a.open("signup")
    checks.check(answer(a, "freeip") == ("ok", "Username available"), "an IP entry matches a URL written with that address")
    checks.check(wrong_address.requests == ["freeip"], "the address URL's request arrived: %s" % wrong_address.requests)
    # A client of the trusted daemon is unaffected meanwhile.
    checks.check(answer(c, "freeafter") == ("ok", "Username available"), "the trusted daemon still answers")

    # ---- 4. without the CA file the system's trust store does not know the CA
    s = Client(system_store.sock)
    s.open("signup")
    before_requests = len(service.requests)
    for name in ["frees1", "frees2", "takens3"]:
        checks.check(answer(s, name) == ("failed", "Error contacting server"), "system trust store: %s" % name)
    checks.check(len(service.requests) == before_requests, "no request sent over an untrusted connection")
    lines = unreachable_lines(system_store)
    checks.check(len(lines) == 1 and "not signed by a trusted CA" in lines[0], "untrusted certificate logged once with the reason: %s" % lines)

    # ---- 5. a superseded check is aborted: the connection is closed, the slot freed
    for n in range(20):
        service.slow_arrived.clear()
        c.send("set", field="username", value="slow%d" % n)
        # Within 3 s even past the pool's 16 connections: a closed one frees its slot at once.
        checks.check(service.slow_arrived.wait(3), "slow%d reached the service" % n)
    checks.check(answer(c, "freelast") == ("ok", "Username available"), "a check after 20 superseded ones (pool of 16) answers")
    for n in range(20):
        service.slow_done.acquire(timeout=10)  # each slow handler signals once it has seen the close
    closes = service.slow_closed
    checks.check(len(closes) == 20 and all(t is not None and t < 2 for t in closes),
                 "every superseded check's TLS connection was closed well before the 10 s timeout: %s" % closes)
    print("  superseded https checks: closed at the service after %.3f s at most" % max(t for t in closes if t is not None))
    checks.check(unreachable_lines(trusted) == [], "superseded checks are not logged as failures: %s" % unreachable_lines(trusted))
finally:
    for daemon in [trusted, impostor, by_address, address_url, system_store, plain_http]:
        checks.check(daemon.stop() == 0, "daemon exits 0")


# ---- 5b. a service that accepts TCP and never does its TLS handshake: the timeout is
# logged (the client only sees "Error contacting server"), and stopping signupd while such a
# check is pending leaves nothing for SwiftNIO to complain about.
class Silent:
    """Accepts connections and holds them without a byte: a hung TLS service."""

    def __init__(self):
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(16)
        self.port = self.listener.getsockname()[1]
        self.held = []
        threading.Thread(target=self.run, daemon=True).start()

    def run(self):
        while True:
            try:
                connection, _ = self.listener.accept()
            except OSError:
                return
            self.held.append(connection)

    def wait_for_connection(self, beyond, seconds=10):
        """Whether more than `beyond` connections have been accepted (polled)."""
        deadline = time.monotonic() + seconds
        while len(self.held) <= beyond and time.monotonic() < deadline:
            time.sleep(0.01)
        return len(self.held) > beyond


def wait_for_log(daemon, text, seconds=10):
    """The daemon's log once it holds `text` (polled: the warning is written as the check ends)."""
    deadline = time.monotonic() + seconds
    while text not in daemon.log() and time.monotonic() < deadline:
        time.sleep(0.05)
    return daemon.log()


# ---- 5a. a certificate out of its dates is named as such, not as an unknown CA; a new
# cause while still unreachable is logged once more.
expired_service = Service(expired)
not_yet_service = Service(not_yet)
dated = Daemon(binary, args=FAST_HASH + ["--availability-url", expired_service.url(), "--availability-timeout", "2"] + ca).start()
dated_later = Daemon(binary, args=FAST_HASH + ["--availability-url", not_yet_service.url(), "--availability-timeout", "2"] + ca).start()
try:
    lines = unreachable_and_logged(dated, "free1", "an expired certificate: Error contacting server")
    checks.check(len(lines) == 1 and "expired on 2024-02-01 00:00:00 UTC" in lines[0] and "trusted CA" not in lines[0],
                 "an expired certificate is logged as expired: %s" % lines)
    lines = unreachable_and_logged(dated_later, "free1", "a not yet valid certificate: Error contacting server")
    checks.check(len(lines) == 1 and "not valid yet (from 2099-01-01 00:00:00 UTC" in lines[0],
                 "a not yet valid certificate is logged as such: %s" % lines)
finally:
    checks.check(dated.stop() == 0 and dated_later.stop() == 0, "daemons exit 0")
expired_service.server.shutdown()
not_yet_service.server.shutdown()

silent = Silent()
silent_url = "https://localhost:%d/users/{username}" % silent.port
hung = Daemon(binary, args=FAST_HASH + ["--availability-url", silent_url, "--availability-timeout", "1"] + ca).start()
try:
    c = Client(hung.sock)
    c.open("signup")
    checks.check(answer(c, "anyone") == ("failed", "Error contacting server"), "a hung TLS service: Error contacting server")
    # The check's timeout and the handshake's are both 1 s, on different event loops:
    # whichever fires first names the cause, and both say the service did not answer in time.
    log = wait_for_log(hung, "availability service unreachable")
    checks.check("availability service unreachable" in log and ("no answer within 1 s" in log or "no TLS handshake within 1 s" in log),
                 "a check that timed out is logged once as a warning with the reason: %s" % unreachable_lines(hung))
finally:
    checks.check(hung.stop() == 0, "daemon exits 0")
# SIGTERM while a check waits for the handshake: mid-check, and as its timeout runs out.
for round, timeout in enumerate(["2", "2", "1", "1"]):
    racing = Daemon(binary, args=FAST_HASH + ["--availability-url", silent_url, "--availability-timeout", timeout] + ca).start()
    c = Client(racing.sock)
    c.open("signup")
    connected = len(silent.held)
    c.send("set", field="username", value="pending%d" % round)
    if timeout == "2":
        silent.wait_for_connection(connected)  # the check is connected and waits for the handshake
    else:
        c.until(lambda m: m.get("event") == "validation" and m["state"] == "failed")  # its timeout has just run out
    code = racing.stop()
    checks.check(code == 0 and "Cannot schedule tasks" not in racing.log() and "ERROR" not in racing.log(),
                 "SIGTERM with a pending check (round %d): exit %s, no SwiftNIO error: %s" % (
                     round, code, [line for line in racing.log().splitlines() if "ERROR" in line][:2]))
silent.listener.close()


# ---- 6. bad CA files and misuse of the option, as an administrator meets them
def start_fails(extra):
    directory = tempfile.mkdtemp(prefix="signupd-tls-bad-", dir=work)
    run = subprocess.run([binary, "--socket", os.path.join(directory, "s.sock"), "--database", ":memory:"] + extra,
                         env={"PATH": "/usr/bin:/bin"}, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60, text=True)
    return run.returncode, run.stderr


with open(path("not-pem.txt"), "w") as f:
    f.write("just some text\n")
with open(path("broken.pem"), "w") as f:
    f.write("-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----\n")
url = ["--availability-url", service.url()]
for ca_file, says in [(path("missing.pem"), "No such file or directory"), (path("not-pem.txt"), "holds no PEM certificate"),
                      (path("broken.pem"), "cannot be read"), (work, "not a regular file")]:
    code, stderr = start_fails(url + ["--availability-ca-file", ca_file])
    checks.check(code == 1 and ("--availability-ca-file %s" % ca_file) in stderr and says in stderr,
                 "CA file %s refused at start (exit 1) saying %r: %d %s" % (os.path.basename(ca_file), says, code, stderr.strip()))
code, stderr = start_fails(["--availability-url", "http://127.0.0.1:1/u/{username}", "--availability-ca-file", path("ca.pem")])
checks.check(code == 64 and "is for an https:// --availability-url" in stderr, "CA file with http:// is a usage error: %d %s" % (code, stderr.strip()))
code, stderr = start_fails(["--availability-url", "ftp://127.0.0.1/u/{username}"])
checks.check(code == 64 and "use http:// or https://" in stderr, "an unsupported scheme is a usage error: %d %s" % (code, stderr.strip()))
for template in ["https://user:s3cret@localhost:%d/users/{key}" % service.port, "http://user:s3cret@127.0.0.1:1/u/{key}"]:
    code, stderr = start_fails(["--availability-url", template])
    checks.check(code == 64 and "user name or password in the URL" in stderr and "s3cret" not in stderr,
                 "a password in the URL is refused (exit 64) and not repeated: %d %s" % (code, stderr.strip()))

for s in [service, wrong_name, wrong_address]:
    s.release_hung.set()
    s.server.shutdown()
shutil.rmtree(work, ignore_errors=True)
checks.done()
