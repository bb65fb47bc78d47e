#!/usr/bin/env python3
"""Three signupd "hosts", each in its own network namespace, share one PostgreSQL server in a
fourth namespace, reached over TCP through veth pairs (TLS, verify-full against the test CA,
password from a file). Checks, through each host's own Unix socket, as clients use it:

  1. 300 clients spread over the 3 hosts race for 10 names: exactly 10 ok, 290 told
     "Username already taken", 10 rows in the table.
  2. a login token issued on host A verifies on B and C, and after `logout` on B neither A nor C
     accepts it; failed logins on A throttle B and C.
  3. PostgreSQL stopped for 5 s in the middle of a signup load and started again: every
     acknowledged signup is in the table, every other attempt got a clear refusal, all
     hosts serve again without a restart.
  4. kill -9 of one host in the middle of a load: nothing acknowledged is lost; the other
     hosts go on.

Skips (exit 0, saying why) where network namespaces or the PostgreSQL server cannot run.

usage: several_hosts.py path/to/signupd [--measure]
  --measure: also time signups per second with 1, 2 and 3 hosts at the default hash cost
"""
import shutil
import atexit
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "robustness"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import FAST_HASH, Checks, Daemon, race_signups  # noqa: E402
from harness import Client as PlainClient  # noqa: E402


class Client(PlainClient):
    """Remembers the last messages, to say what a client was waiting for when it timed out."""

    def read(self):
        message = PlainClient.read(self)
        self.recent = (getattr(self, "recent", []) + [message])[-6:]
        return message
from pgserver import PostgresServer, Unavailable  # noqa: E402

TAKEN = "Username already taken"
UNAVAILABLE = "Account store unavailable, try again later"
CONTACT = "Error contacting server"
PASSWORD = "several hosts 1"
binary = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else ""
measure = "--measure" in sys.argv
tag = "sg%d" % (os.getpid() % 100000)
DB_NS = tag + "db"
HOST_NS = [tag + "h%d" % i for i in (1, 2, 3)]


def sh(*argv, check=True):
    return subprocess.run(argv, check=check, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def skip(why):
    print("several_hosts: SKIP: %s" % why)
    print("several hosts on PostgreSQL: 0 passed, 0 failed, 1 skipped")
    sys.exit(0)


def make_network():
    """Namespaces and veth pairs: host i is 10.231.i.2, the database 10.231.i.1 on its side."""
    if os.geteuid() != 0:
        skip("network namespaces need root")
    made = sh("ip", "netns", "add", DB_NS, check=False)
    if made.returncode != 0:
        skip("ip netns add refused: %s" % made.stderr.decode(errors="replace").strip())
    sh("ip", "-n", DB_NS, "link", "set", "lo", "up")
    for i, ns in enumerate(HOST_NS, start=1):
        sh("ip", "netns", "add", ns)
        sh("ip", "-n", ns, "link", "set", "lo", "up")
        host_end, db_end = "%sv%d" % (tag, i), "%sd%d" % (tag, i)
        sh("ip", "link", "add", host_end, "type", "veth", "peer", "name", db_end)
        sh("ip", "link", "set", host_end, "netns", ns)
        sh("ip", "link", "set", db_end, "netns", DB_NS)
        sh("ip", "-n", ns, "addr", "add", "10.231.%d.2/24" % i, "dev", host_end)
        sh("ip", "-n", DB_NS, "addr", "add", "10.231.%d.1/24" % i, "dev", db_end)
        sh("ip", "-n", ns, "link", "set", host_end, "up")
        sh("ip", "-n", DB_NS, "link", "set", db_end, "up")


def remove_network():
    for ns in HOST_NS + [DB_NS]:
        sh("ip", "netns", "delete", ns, check=False)


class Host(Daemon):
    """signupd in a network namespace, on its own socket, ready when it says READY=1."""

    env_path = "/usr/sbin:/usr/bin:/sbin:/bin"

    def __init__(self, index, directory, url, password_file, args):
        Daemon.__init__(self, binary, directory=directory, database=url, socket_name="host%d.sock" % (index + 1),
                        log_name="host%d.log" % (index + 1), args=["--database-password-file", password_file] + list(args))
        self.index = index
        self.ns = HOST_NS[index]
        self.label = "host %d" % (index + 1)

    def command(self):
        return ["ip", "netns", "exec", self.ns] + Daemon.command(self)


def signup_once(client, name):
    """One signup on an open connection; returns ("ok", name) or ("refused", message)."""
    outcome = client.race_signup(name, PASSWORD)
    client.send("close")
    return outcome[0], text(outcome[1])


def text(message):
    return message["text"] if isinstance(message, dict) else message


def login(client, name, password):
    client.open("login")
    client.send("set", field="username", value=name)
    client.send("set", field="password", value=password)
    client.until(lambda m: m.get("event") == "enabled" and m["value"])
    result = client.submit_and_wait()
    client.send("close")
    return result


def rows(server, database, where="TRUE"):
    return server.psql("SELECT username FROM account WHERE %s ORDER BY username" % where, database=database).split()


def main():
    checks = Checks("several hosts on PostgreSQL")
    try:
        server = PostgresServer(listen="*", netns=DB_NS, host="10.231.1.1", addresses=["10.231.1.1", "10.231.2.1", "10.231.3.1"], clients="10.231.0.0/16")
    except Unavailable as why:
        skip(str(why))
    make_network()
    directory = tempfile.mkdtemp(prefix="signupd-hosts-")
    atexit.register(shutil.rmtree, directory, ignore_errors=True)
    hosts = []
    try:
        try:
            server.init().start()
        except Unavailable as why:
            skip(str(why))
        database = server.create_database("accounts")
        args = FAST_HASH + ["--login-attempts-per-minute", "3", "--max-queued-hashes", "512", "--max-queued-hashes-per-user", "512",
                            "--availability-checks-per-second", "1000", "--database-timeout", "2",
                            # The load retries at once after a refusal: more than a person.
                            "--max-expensive-requests-per-second", "100000"]

        def url(i):
            return server.url(database, host="10.231.%d.1" % (i + 1), sslmode="verify-full") + "&sslrootcert=" + server.ca

        # All three start at once on an empty database: the advisory lock orders their migrations.
        starters = [threading.Thread(target=lambda i=i: hosts.append(Host(i, directory, url(i), server.password_file, args).start())) for i in range(3)]
        for t in starters:
            t.start()
        for t in starters:
            t.join()
        hosts.sort(key=lambda h: h.index)
        checks.check(len(hosts) == 3, "three hosts started at once on one empty database")
        checks.check(server.psql("SELECT string_agg(version::text, ',') FROM signupd_schema", database=database) == "1,2,3", "each schema migration recorded once")
        race(checks, server, database, hosts)
        # Not over loopback: each host's pooled connections come from its own veth address.
        peers = server.psql("SELECT string_agg(DISTINCT host(client_addr), ',' ORDER BY host(client_addr)) FROM pg_stat_activity WHERE application_name = 'signupd'", database=database)
        checks.check(all("10.231.%d.2" % i in peers for i in (1, 2, 3)), "each host reaches PostgreSQL from its own namespace: %s" % peers)
        tokens_and_throttling(checks, hosts)
        pause_on_one_host(checks, hosts)
        restart_postgres(checks, server, database, hosts)
        kill_one_host(checks, server, database, hosts, directory, url, args)
        for host in hosts:
            checks.check(host.stop() == 0, "host %d exits 0 on SIGTERM" % (host.index + 1))
        combined = "".join(h.log() for h in hosts)
        checks.check(server.password not in combined, "the database password is in no host's log")
        if measure:
            throughput(server, directory, url)
    finally:
        for host in hosts:
            if host.proc and host.proc.poll() is None:
                host.proc.kill()
                host.proc.wait()
        server.destroy()
        remove_network()
    checks.done()


def race(checks, server, database, hosts):
    names = ["racer%d" % i for i in range(10)]
    # Connected one after another: 300 connects at once would overflow the daemons' short
    # accept queue (64, README "--max-connects-per-user-per-second"); the race is the submits.
    clients = [Client(hosts[index % 3].sock, timeout=120) for index in range(300)]
    outcomes = [(kind, text(what)) for kind, what in race_signups(clients, names, lambda _: PASSWORD, timeout=120)]
    winners = sorted(name for kind, name in outcomes if kind == "ok")
    losers = [message for kind, message in outcomes if kind == "refused"]
    checks.check(len(outcomes) == 300, "all 300 clients got an answer (%d)" % len(outcomes))
    checks.check(winners == sorted(names), "exactly one ok per name: %s" % winners)
    checks.check(len(losers) == 290 and all(m == TAKEN for m in losers), "the 290 others were told taken: %s" % set(losers))
    checks.check(rows(server, database, "username LIKE 'racer%'") == sorted(names), "10 rows in the account table")


def tokens_and_throttling(checks, hosts):
    a, b, c = (Client(h.sock) for h in hosts)
    checks.check(signup_once(a, "Wanderer") == ("ok", "Wanderer"), "signup on host A")
    result = login(a, "wanderer", PASSWORD)
    token = result.get("token")
    checks.check(result.get("ok") and token, "login on host A gives a token")
    for name, client in (("B", b), ("C", c)):
        verified, _ = client.reply(client.send("verify", token=token))
        checks.check(verified.get("user") == "Wanderer", "host A's token verifies on host %s: %s" % (name, verified))
    # logout on host B revokes it everywhere: A and C refuse it from then on.
    revoked, _ = b.reply(b.send("logout", token=token))
    checks.check(revoked.get("event") == "revoked", "logout on host B: %s" % revoked)
    for name, client in (("A", a), ("C", c)):
        refused, _ = client.reply(client.send("verify", token=token))
        checks.check(refused.get("event") == "error" and refused.get("code") == "invalid_token",
                     "after logout on host B, host %s refuses the token: %s" % (name, refused))
    checks.check(signup_once(a, "guarded") == ("ok", "guarded"), "signup of the throttled name")
    for _ in range(3):
        failed = login(a, "guarded", "wrong password")
        checks.check(text(failed.get("message")) == "Invalid username or password", "a failed login on host A")
    for name, client in (("B", b), ("C", c)):
        refused = login(client, "guarded", PASSWORD)
        checks.check(not refused.get("ok") and text(refused.get("message")) == "Too many attempts, try again later",
                     "failures on host A throttle host %s: %s" % (name, refused))
    for client in (a, b, c):
        client.close()


def pause_on_one_host(checks, hosts):
    """`signups pause` on host A (root: an administrator) refuses sign-up on host B within a
    second — an open form there is told, a new one says so — while logins go on; `resume`
    on B opens it on A again."""
    a, b = Client(hosts[0].sock), Client(hosts[1].sock)
    waiting = Client(hosts[1].sock)
    waiting.open("signup")
    paused, _ = a.reply(a.send("signups", pause=True, message="spam flood"))
    checks.check(paused.get("paused") is True, "host A pauses sign-up: %s" % paused)
    started = time.monotonic()
    told, _ = waiting.until(lambda m: m.get("event") == "result")
    took = time.monotonic() - started
    checks.check(told.get("messageId") == "signup.paused_note" and took < 1.0,
                 "an open signup form on host B is told within a second (%.2f s): %s" % (took, told))
    b.open("signup")
    said, _ = b.until(lambda m: m.get("event") == "result")
    checks.check(said.get("messageId") == "signup.paused_note", "a signup form opened on host B says sign-up is paused: %s" % said)
    b.send("set", field="username", value="pausedonb")
    b.send("set", field="password", value=PASSWORD)
    b.send("set", field="repeatedPassword", value=PASSWORD)
    refused = b.submit_and_wait()
    checks.check(refused.get("event") == "result" and refused.get("messageId") == "signup.paused_note", "a signup on host B is refused: %s" % refused)
    result = login(b, "wanderer", PASSWORD)
    checks.check(result.get("ok"), "a login on host B still works while sign-up is paused: %s" % result)
    opened, _ = b.reply(b.send("signups", pause=False))
    checks.check(opened.get("paused") is False, "host B opens sign-up again: %s" % opened)
    c = Client(hosts[2].sock)
    for name, client in (("A", a), ("C", c)):
        deadline = time.monotonic() + 2
        state = {}
        while time.monotonic() < deadline:
            state, _ = client.reply(client.send("signups"))
            if state.get("paused") is False:
                break
            time.sleep(0.1)  # polling the host's view; it learns within its 500 ms poll
        checks.check(state.get("paused") is False, "host %s sees sign-up open again: %s" % (name, state))
    c.close()
    checks.check(signup_once(a, "afterpause") == ("ok", "afterpause"), "a signup on host A goes through after resume")
    for client in (a, b, waiting):
        client.close()


def load(hosts, prefix, stop, acknowledged, refusals, lock, workers_per_host=3):
    """Fresh signups on every host until `stop`; records what was acknowledged and refused."""
    def worker(host, w):
        n = 0
        try:
            c = Client(host.sock, timeout=30)
            while not stop.is_set():
                n += 1
                name = "%sh%dw%dn%d" % (prefix, host.index + 1, w, n)
                kind, what = signup_once(c, name)
                with lock:
                    (acknowledged.add(what) if kind == "ok" else refusals.append(what))
        except (EOFError, OSError, ValueError) as error:
            # A killed host closes its connections; anything else is worth saying.
            if not stop.is_set() and isinstance(error, TimeoutError):
                print("  worker %s on host %d ended: %r after %s" % (w, host.index + 1, error, getattr(c, "recent", None)))
    threads = [threading.Thread(target=worker, args=(h, w)) for h in hosts for w in range(workers_per_host)]
    for t in threads:
        t.start()
    return threads


def wait_until(predicate, seconds, what):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.2)  # polling a condition, with a deadline
    raise AssertionError("not within %d s: %s" % (seconds, what))


def restart_postgres(checks, server, database, hosts):
    stop, lock = threading.Event(), threading.Lock()
    acknowledged, refusals = set(), []
    threads = load(hosts, "pgdown", stop, acknowledged, refusals, lock)
    wait_until(lambda: len(acknowledged) >= 30, 60, "signups acknowledged before the stop")
    server.stop("fast")
    down_at = time.monotonic()
    # Two seconds into the outage (past any first failure), a refused connection must be
    # answered at once, not after --database-timeout: the store's circuit breaker is open.
    while time.monotonic() - down_at < 2:
        time.sleep(0.1)
    probe = Client(hosts[0].sock)
    waits = []
    for i in range(3):
        started = time.monotonic()
        outcome = signup_once(probe, "pgdownprobe%d" % i)
        waits.append(time.monotonic() - started)
        checks.check(outcome[0] == "refused", "a signup while PostgreSQL is down is refused (%s)" % (outcome,))
    probe.close()
    checks.check(max(waits) < 1.0, "while PostgreSQL refuses connections, signups are refused at once (%s s)" % ", ".join("%.2f" % w for w in waits))
    print("  PostgreSQL down, 2 s in: a signup attempt answered in %s s" % ", ".join("%.3f" % w for w in waits))
    while time.monotonic() - down_at < 5:
        time.sleep(0.1)  # PostgreSQL stays down for 5 s while the load goes on
    refused_while_down = len(refusals)
    server.start()
    with lock:
        before = set(acknowledged)

    def every_host_recovered():
        # Each host's pool reconnects on its own schedule (with back-off): wait for each.
        with lock:
            again = acknowledged - before
        return all(sum(1 for n in again if n.startswith("pgdownh%d" % (h.index + 1))) >= 5 for h in hosts)
    try:
        wait_until(every_host_recovered, 60, "signups acknowledged again on every host after PostgreSQL restarted")
    except AssertionError:
        print("workers alive: %d; refusals: %s" % (sum(t.is_alive() for t in threads), sorted(set(refusals))))
        raise
    stop.set()
    for t in threads:
        t.join()
    stored = set(rows(server, database, "username LIKE 'pgdown%'"))
    checks.check(refused_while_down > 0, "attempts while PostgreSQL was down were refused (%d)" % refused_while_down)
    checks.check(acknowledged <= stored, "every acknowledged signup is in the table (%d acknowledged, %d missing)" % (len(acknowledged), len(acknowledged - stored)))
    unclear = [m for m in refusals if m not in (UNAVAILABLE, CONTACT)]
    checks.check(not unclear, "every other attempt got a clear refusal: %s" % set(unclear))
    for host in hosts:
        c = Client(host.sock)
        outcome = signup_once(c, "afterrestart%d" % host.index)
        checks.check(outcome == ("ok", "afterrestart%d" % host.index), "host %d serves again without restart (%s)" % (host.index + 1, outcome))
        c.close()
        log = host.log()
        down = [l for l in log.splitlines() if "account store unavailable" in l]
        # The cause depends on what the host tried first: a new connection (refused) or one the
        # stopping server closed under it — and a stopping server can do both, one after the
        # other (seen: closed, then refused 2 s later), so one stop may be logged twice. Each
        # line names its cause, never PSQLError's placeholder; a warning per request would be
        # thousands here.
        named = all(("connection refused" in l or "was closed" in l) and "Generic description" not in l for l in down)
        checks.check(1 <= len(down) <= 2 and named, "host %d logged the outage once or twice, with its cause: %s" % (host.index + 1, down))
        checks.check(1 <= log.count("account store available again") <= 2, "host %d logged that the store is back" % (host.index + 1))
    print("  PostgreSQL down 5 s: %d acknowledged, %d refused with %s" % (len(acknowledged), len(refusals), sorted(set(refusals))))


def kill_one_host(checks, server, database, hosts, directory, url, args):
    stop, lock = threading.Event(), threading.Lock()
    acknowledged, refusals = set(), []
    threads = load(hosts, "kill", stop, acknowledged, refusals, lock)
    wait_until(lambda: sum(1 for n in acknowledged if n.startswith("killh3")) >= 10, 60, "signups on host 3 before kill -9")
    hosts[2].proc.send_signal(signal.SIGKILL)
    hosts[2].proc.wait()
    before = len(acknowledged)
    wait_until(lambda: len(acknowledged) >= before + 20, 60, "the other hosts go on after kill -9 of host 3")
    stop.set()
    for t in threads:
        t.join()
    stored = set(rows(server, database, "username LIKE 'kill%'"))
    checks.check(acknowledged <= stored, "kill -9 of host 3 lost nothing acknowledged (%d acknowledged)" % len(acknowledged))
    unclear = [m for m in refusals if m not in (UNAVAILABLE, CONTACT)]
    checks.check(not unclear, "no other refusal: %s" % set(unclear))
    os.unlink(hosts[2].sock)
    hosts[2] = Host(2, directory, url(2), server.password_file, args).start()
    c = Client(hosts[2].sock)
    checks.check(signup_once(c, "hostthreeback") == ("ok", "hostthreeback"), "host 3 restarted serves")
    c.close()


def throughput(server, directory, url):
    """Signups per second at the default Argon2id cost (2 passes, 64 MiB), 1, 2 and 3 hosts,
    each on a fresh database, all on this one machine (its cores are shared by every host)."""
    for count in (1, 2, 3):
        database = server.create_database("throughput%d" % count)
        measured = [Host(i, directory, url(i).replace("/accounts?", "/%s?" % database), server.password_file,
                         ["--max-queued-hashes", "512", "--max-queued-hashes-per-user", "512"]).start() for i in range(count)]
        stop, lock = threading.Event(), threading.Lock()
        acknowledged, refusals = set(), []
        threads = load(measured, "tp%d" % count, stop, acknowledged, refusals, lock, workers_per_host=4)
        started = time.monotonic()
        while time.monotonic() - started < 10:
            time.sleep(0.5)  # a fixed measuring window
        stop.set()
        for t in threads:
            t.join()
        elapsed = time.monotonic() - started
        print("  throughput: %d host(s): %.1f signups/s (%d in %.1f s, Argon2id ops=2 mem=64 MiB, %d refused)"
              % (count, len(acknowledged) / elapsed, len(acknowledged), elapsed, len(refusals)))
        for h in measured:
            h.stop()


if __name__ == "__main__":
    try:
        main()
    except BaseException:
        remove_network()
        raise
