#!/usr/bin/env python3
"""What an operator sees and steers (issue 26), against signupd as a separate process:

  1. metrics over the Unix socket (--metrics-socket): after one signup, two failed logins and
     a throttled one, each counter moved by exactly that much, and the validation histogram
     counted exactly the `set`s sent; the exposition parses with prometheus_client's parsers,
     the Prometheus text and (asked for by Accept) the strict OpenMetrics one; promtool
     checks it too when Debian's prometheus package is installed. A scrape is no client
     connection: the idle daemon exits with the socket scraped, and the socket goes with it.
  2. logs that name who: 10,000 refusals from one peer make at most a handful of lines, each
     with uid and pid, and one summary line says how many more there were.
  3. `signups pause` (root) refuses sign-up in open and new forms with signup.paused_note in
     both locales, logins go on, a user who is not an administrator is refused, and the pause
     survives a restart; `resume` opens sign-up again.
  4. `status` and `sessions --all`: root sees everything, another uid its own share only.

usage: operators_test.py path/to/signupd path/to/signupctl
"""
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "robustness"))
from harness import FAST_HASH, Checks, Client, Daemon, as_uid  # noqa: E402

from prometheus_client.openmetrics.parser import text_string_to_metric_families as parse_openmetrics  # noqa: E402
from prometheus_client.parser import text_string_to_metric_families as parse_prometheus  # noqa: E402

signupd, signupctl = (os.path.abspath(p) for p in sys.argv[1:3])
PASSWORD = "operators test 1"
OTHER_UID = 65534


def scrape(path, openmetrics=False):
    """GET /metrics over the Unix socket: (status line, headers, body)."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(10)
        s.connect(path)
        accept = "Accept: application/openmetrics-text; version=1.0.0\r\n" if openmetrics else ""
        s.sendall(("GET /metrics HTTP/1.1\r\nHost: signupd\r\n%sConnection: close\r\n\r\n" % accept).encode())
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    headers = {k.lower(): v.strip() for k, v in (line.split(":", 1) for line in lines[1:])}
    return lines[0], headers, body.decode()


def samples(text):
    """{(name, frozenset(labels)): value} of a Prometheus text exposition."""
    found = {}
    for family in parse_prometheus(text):
        for sample in family.samples:
            found[(sample.name, frozenset(sample.labels.items()))] = sample.value
    return found


def value(found, name, **labels):
    return found.get((name, frozenset(labels.items())), 0.0)


def login(client, name, password):
    client.open("login")
    client.send("set", field="username", value=name)
    client.send("set", field="password", value=password)
    client.until(lambda m: m.get("event") == "enabled" and m.get("value"))
    return client.submit_and_wait()


def ctl(daemon, *args, uid=None):
    argv = [signupctl, "--socket", daemon.sock] + list(args)
    if uid is not None:
        argv = as_uid(uid, argv)
    return subprocess.run(argv, capture_output=True, text=True, timeout=60)


def main():
    checks = Checks("operators")
    work = tempfile.mkdtemp(prefix="signupd-ops-")
    os.chmod(work, 0o755)  # another uid reaches the socket (status, signups as a non-administrator)
    try:
        metrics_path = os.path.join(work, "metrics.sock")
        args = FAST_HASH + ["--socket-mode", "0666", "--metrics-socket", metrics_path, "--login-attempts-per-minute", "2",
                            "--log-summary-seconds", "2", "--idle-exit", "3"]
        daemon = Daemon(signupd, directory=work, args=args).start()
        counters_and_histogram(checks, daemon, metrics_path)
        summarised_logs(checks, daemon)
        status_and_sessions(checks, daemon)
        pause(checks, daemon)
        # Idle exit with the metrics socket scraped all along: scrapes are no connections.
        checks.check(daemon.stop() == 0, "signupd stops cleanly")
        checks.check(not os.path.exists(metrics_path), "the metrics socket is removed when signupd stops")
        idle = Daemon(signupd, directory=work, args=args).start()
        started = time.monotonic()
        scraped = 0
        while idle.proc.poll() is None and time.monotonic() - started < 30:
            try:
                status, _, _ = scrape(metrics_path)
            except (FileNotFoundError, ConnectionRefusedError):
                break  # it exited between the look and the scrape
            checks.check(status.endswith("200 OK"), "a scrape of the idle daemon answers: %s" % status)
            scraped += 1
            time.sleep(0.5)  # a scraper's interval, not synchronisation
        idle.proc.wait(timeout=30)
        checks.check(scraped >= 4, "it was scraped while idle (%d times)" % scraped)
        checks.check(idle.proc.poll() == 0, "the daemon exits when idle although it was scraped every half second")
        checks.check(not os.path.exists(metrics_path), "and the metrics socket is gone: a scrape starts nothing")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    checks.done()


def counters_and_histogram(checks, daemon, metrics_path):
    status, headers, before_text = scrape(metrics_path)
    checks.check(status == "HTTP/1.1 200 OK", "the metrics socket answers GET /metrics: %s" % status)
    checks.check(headers.get("content-type", "").startswith("text/plain; version=0.0.4"), "Prometheus text by default: %s" % headers)
    before = samples(before_text)
    checks.check(value(before, "signupd_up") == 1, "signupd_up is 1")
    mode = os.stat(metrics_path).st_mode & 0o777
    checks.check(mode == 0o600, "without --metrics-socket-group the socket is private: %o" % mode)

    client = Client(daemon.sock)
    client.open("signup")
    sets = 0
    for typed in ("m", "me", "met", "metr", "metri", "metric", "metrics1"):
        client.send("set", field="username", value=typed)
        sets += 1
    client.until(lambda m: m.get("event") == "validation" and m["field"] == "username" and m["state"] == "ok")
    for field in ("password", "repeatedPassword"):
        client.send("set", field=field, value=PASSWORD)
        sets += 1
    client.until(lambda m: m.get("event") == "enabled" and m.get("value"))
    result = client.submit_and_wait()
    checks.check(result.get("ok"), "signup of metrics1: %s" % result)
    client.send("close")
    login_sets = 0
    outcomes = []
    for password in ("wrong one", "wrong two", PASSWORD):
        outcomes.append(login(client, "metrics1", password))
        login_sets += 2
    checks.check([o.get("ok") for o in outcomes] == [False, False, False], "two failed logins, then a throttled one")
    checks.check(outcomes[2]["messageId"] == "login.rate_limited", "the third is throttled: %s" % outcomes[2])
    client.barrier()
    after_text = scrape(metrics_path)[2]
    after = samples(after_text)

    def moved(name, **labels):
        return value(after, name, **labels) - value(before, name, **labels)

    checks.check(moved("signupd_signups_total", form="signup", outcome="ok") == 1, "signups_total{ok} moved by exactly 1")
    checks.check(moved("signupd_logins_total", form="login", outcome="failed") == 2, "logins_total{failed} moved by exactly 2")
    checks.check(moved("signupd_logins_total", form="login", outcome="throttled") == 1, "logins_total{throttled} moved by exactly 1")
    checks.check(moved("signupd_logins_total", form="login", outcome="ok") == 0, "no login counted ok")
    checks.check(moved("signupd_validation_seconds_count", form="signup") == sets, "the signup form's validation histogram counted the %d sets sent: %s" % (
        sets, moved("signupd_validation_seconds_count", form="signup")))
    checks.check(moved("signupd_validation_seconds_count", form="login") == login_sets, "the login form's counted its %d" % login_sets)
    checks.check(moved("signupd_hash_seconds_count") == 3, "3 hashes timed (a signup, two failed logins; the throttled one never hashed): %s" % moved("signupd_hash_seconds_count"))
    checks.check(moved("signupd_store_seconds_count", operation="create_account") == 1, "one create_account store call timed")
    checks.check(value(after, "signupd_availability_checks_total", result="available") >= 1, "availability checks counted by result")
    checks.check(value(after, "signupd_connections") >= 1 and value(after, "signupd_sessions") >= 1, "levels sampled at the scrape")
    # What all connections buffer, beside its budget: a line sent without its end is held
    # until the rest comes (polled: the daemon reads it when its loop gets to it).
    holder = socket.socket(socket.AF_UNIX)
    holder.connect(daemon.sock)
    holder.sendall(b'{"op":"ping","pad":"' + b"x" * 20000)
    deadline = time.monotonic() + 10
    held = samples(scrape(metrics_path)[2])
    while value(held, "signupd_buffered_bytes") < 20000 and time.monotonic() < deadline:
        held = samples(scrape(metrics_path)[2])
    checks.check(value(held, "signupd_buffered_bytes") >= 20000, "signupd_buffered_bytes counts a half-sent line: %s" % value(held, "signupd_buffered_bytes"))
    checks.check(value(held, "signupd_buffered_bytes_budget") == 268435456, "signupd_buffered_bytes_budget is --max-buffered-bytes: %s" % value(held, "signupd_buffered_bytes_budget"))
    busiest = json.loads(ctl(daemon, "--json", "status").stdout)["status"]["busiest"]
    mine = [peer for peer in busiest if peer["uid"] == 0]
    checks.check(mine and mine[0]["bufferedBytes"] >= 20000, "status names who buffers it (busiest): %s" % busiest)
    checks.check(re.search(r"uid 0: .*, \d+ bytes buffered", ctl(daemon, "status").stdout), "status as text says what the busiest buffer")
    holder.close()
    checks.check(re.search(r'^signupd_build_info\{version="[^"]+"\} 1', after_text, re.M), "build info carries the version")
    # The strict OpenMetrics parser, on what a Prometheus 2.x scrape asks for.
    status, headers, openmetrics = scrape(metrics_path, openmetrics=True)
    checks.check(headers.get("content-type", "").startswith("application/openmetrics-text; version=1.0.0"), "OpenMetrics when asked: %s" % headers)
    checks.check(openmetrics.endswith("# EOF\n"), "OpenMetrics ends in # EOF")
    families = {f.name: f for f in parse_openmetrics(openmetrics)}
    checks.check(families["signupd_signups"].type == "counter", "OpenMetrics names the counter family signupd_signups")
    checks.check(families["signupd_validation_seconds"].type == "histogram", "the validation histogram parses as one")
    promtool = shutil.which("promtool")
    if promtool:
        linted = subprocess.run([promtool, "check", "metrics"], input=after_text, capture_output=True, text=True)
        checks.check(linted.returncode == 0, "promtool check metrics: %s" % (linted.stdout + linted.stderr))
    # A scraper that trickles its request is closed at the deadline (10 s), however slowly
    # its bytes come; one that pipelines requests and never reads is closed, not buffered for.
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as slow:
        slow.connect(metrics_path)
        slow.settimeout(1)
        started = time.monotonic()
        closed = False
        while time.monotonic() - started < 20 and not closed:
            try:
                slow.sendall(b"X")
                closed = slow.recv(1) == b""
            except socket.timeout:
                pass  # still open: the next byte comes a second later
            except OSError:
                closed = True
        checks.check(closed and time.monotonic() - started < 15, "a trickled request is closed at its deadline (%.1f s)" % (time.monotonic() - started))
    rss_before = daemon.rss_kib()
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as greedy:
        greedy.connect(metrics_path)
        greedy.settimeout(10)
        request = b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"
        try:
            for _ in range(200):
                greedy.sendall(request * 100)
        except OSError:
            pass  # closed by signupd: what this checks
    checks.check(daemon.rss_kib() - rss_before < 64 * 1024, "20,000 pipelined scrapes never read cost under 64 MiB (%d KiB)" % (daemon.rss_kib() - rss_before))
    checks.check(scrape(metrics_path)[0].endswith("200 OK"), "and the next scraper is served")
    for path in ("/", "/other"):
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.connect(metrics_path)
            s.sendall(("GET %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n" % path).encode())
            checks.check(s.recv(100).startswith(b"HTTP/1.1 404"), "GET %s is 404" % path)
    client.close()


def summarised_logs(checks, daemon):
    client = Client(daemon.sock)
    log_before = len(daemon.log().splitlines())
    burst = 10000
    # Malformed tokens, pipelined while the answers are read: each is refused (invalid_token,
    # then rate_limited past the budget).
    sender = threading.Thread(target=lambda: [client.send_raw(b"".join(b'{"op":"verify","token":"x","id":%d}\n' % (start + i) for i in range(500)))
                                             for start in range(0, burst, 500)])
    sender.start()
    answered = 0
    while answered < burst:
        message = client.read()
        if message.get("event") == "error":
            answered += 1
    sender.join()
    lines = daemon.log().splitlines()[log_before:]
    refusals = [line for line in lines if "refused:" in line]
    checks.check(len(refusals) <= 6, "%d refusals from one peer made %d log lines" % (burst, len(refusals)))
    pid = str(os.getpid())
    checks.check(refusals and all("uid=0" in line and ("pid=" + pid) in line for line in refusals), "each names the uid and pid: %s" % refusals[:2])
    # The window (--log-summary-seconds 2) ends; the next housekeeping says how many were left out.
    deadline = time.monotonic() + 20
    summary = []
    while not summary and time.monotonic() < deadline:
        summary = [line for line in daemon.log().splitlines()[log_before:] if "more like it not logged separately" in line]
        time.sleep(0.2)  # waiting for the once-a-second housekeeping to write the line
    checks.check(summary, "a summary line counts the refusals left out")
    left_out = sum(int(n) for line in summary for n in re.findall(r": (\d+) more like it", line))
    checks.check(left_out + len(refusals) == burst, "the lines and summaries account for all %d refusals: %d + %d" % (burst, len(refusals), left_out))
    checks.check(all("uid=0" in line and "pid=" + pid in line for line in summary), "the summary names who too: %s" % summary)
    client.close()


def status_and_sessions(checks, daemon):
    holder = Client(daemon.sock)
    session = holder.open("signup")
    root = json.loads(ctl(daemon, "--json", "status").stdout)["status"]
    checks.check(root["scope"] == "all" and root["sessions"] >= 1 and root["connections"] >= 2, "root's status has the daemon-wide figures: %s" % root)
    checks.check(any(r["action"] == "signup" and r["outcome"] == "ok" and r["last1m"] >= 1 for r in root["rates"]), "rates show the signup: %s" % root["rates"])
    checks.check(root["latency"]["validation"]["count"] >= 1 and "p99Ms" in root["latency"]["validation"], "validation p50/p99")
    checks.check(root["busiest"][0]["uid"] == 0, "the busiest peer is uid 0: %s" % root["busiest"])
    text = ctl(daemon, "status").stdout
    checks.check("serving (pid %d" % daemon.proc.pid in text and "Signups 1/5/15m" in text, "status as text: %s" % text)
    queues = root["queues"]
    checks.check(queues["bufferedBytesBudget"] == 268435456 and 0 <= queues["bufferedBytes"] < queues["bufferedBytesBudget"],
                 "status gives what all connections buffer and its budget: %s" % queues)
    checks.check(re.search(r"Buffered: \d+ of 268435456 bytes", text), "status as text says what is buffered of the budget")
    other = ctl(daemon, "--json", "status", uid=OTHER_UID)
    mine = json.loads(other.stdout)["status"]
    checks.check(other.returncode == 0 and mine["scope"] == "own" and "connections" not in mine and "busiest" not in mine,
                 "another uid sees its own share only: %s" % mine)
    checks.check("library" not in mine.get("phoneNumbers", {}), "another uid is not told which phone library is open: %s" % mine.get("phoneNumbers"))
    checks.check(mine["own"]["uid"] == OTHER_UID and mine["own"]["connections"] == 1, "its own connection: %s" % mine["own"])
    listed = json.loads(ctl(daemon, "--json", "sessions", "--all").stdout)["sessions"]
    checks.check(any(s["session"] == session and s["uid"] == 0 for s in listed), "sessions --all lists every session with its owner")
    refused = ctl(daemon, "--json", "sessions", "--all", uid=OTHER_UID)
    checks.check(refused.returncode == 1 and json.loads(refused.stdout)["error"]["code"] == "forbidden", "sessions --all is refused to others: %s" % refused.stdout)
    holder.close()


def pause(checks, daemon):
    waiting = Client(daemon.sock)
    waiting.open("signup")
    refused = ctl(daemon, "--json", "signups", "pause", uid=OTHER_UID)
    checks.check(refused.returncode == 1 and json.loads(refused.stdout)["error"]["code"] == "forbidden", "a non-administrator cannot pause: %s" % refused.stdout)
    # A usage error under --json is its one envelope, with nothing on standard error (helper-48).
    bad = ctl(daemon, "--json", "signups", "pause", "--message", "a\x1bb")
    checks.check(bad.returncode == 64 and json.loads(bad.stdout)["error"]["code"] == "usage" and bad.stderr == "",
                 "a usage error under --json is one envelope and nothing else: %r %r" % (bad.stdout, bad.stderr))
    paused = ctl(daemon, "--json", "signups", "pause", "--message", "back at 14:00")
    state = json.loads(paused.stdout)
    checks.check(paused.returncode == 0 and state["paused"] and state["message"] == "back at 14:00" and state["byUid"] == 0, "root pauses: %s" % state)
    told, _ = waiting.until(lambda m: m.get("event") == "result")
    checks.check(not told["ok"] and told["messageId"] == "signup.paused_note" and told["message"] == "Sign-up is paused: back at 14:00",
                 "an open signup form is told: %s" % told)
    for locale, text in (("en", "Sign-up is paused: back at 14:00"), ("zh-CN", "注册已暂停：back at 14:00")):
        fresh = Client(daemon.sock)
        opened, seen = fresh.reply(fresh.send("open", form="signup", locale=locale))
        snapshot, _ = fresh.until(lambda m: m.get("event") == "result")
        checks.check(snapshot["message"] == text, "a form opened while paused says so in %s: %s" % (locale, snapshot["message"]))
        fresh.close()
    cli = subprocess.run([signupctl, "--socket", daemon.sock, "--json", "signup", "--username", "pausedname", "--password-stdin"],
                         input=PASSWORD + "\n", capture_output=True, text=True, timeout=60)
    checks.check(cli.returncode == 1 and json.loads(cli.stdout)["error"]["messageId"] == "signup.paused_note", "signupctl signup is refused at once: %s" % cli.stdout)
    # A restart keeps the pause (it is in the store).
    daemon.stop()
    daemon.start()
    kept = json.loads(ctl(daemon, "--json", "signups").stdout)
    checks.check(kept["paused"] and kept["message"] == "back at 14:00", "the pause survives a restart: %s" % kept)
    logged_in = subprocess.run([signupctl, "--socket", daemon.sock, "--json", "login", "--username", "metrics1", "--password-stdin"],
                               input=PASSWORD + "\n", capture_output=True, text=True, timeout=60)
    checks.check(logged_in.returncode == 0, "logins go on while sign-up is paused: %s" % logged_in.stdout)
    resumed = json.loads(ctl(daemon, "--json", "signups", "resume").stdout)
    checks.check(resumed["paused"] is False, "resume: %s" % resumed)
    done = subprocess.run([signupctl, "--socket", daemon.sock, "--json", "signup", "--username", "pausedname", "--password-stdin"],
                          input=PASSWORD + "\n", capture_output=True, text=True, timeout=60)
    checks.check(done.returncode == 0, "after resume the signup goes through: %s" % done.stdout)
    waiting.close()


if __name__ == "__main__":
    main()
