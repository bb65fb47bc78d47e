#!/usr/bin/env python3
"""A hostile local user cannot hurt anyone else (issue 11). Each part names its item:
 1. one uid flooding submits does not starve another uid's login: the hash queue is
    fair across uids and bounded per uid (refusals are prompt `rate_limited` errors), and
    jobs of a client that went away never start, so SIGTERM does not wait for them;
 2. a burst of `set`s with an HTTP availability service costs one check in flight per
    session (superseded ones are aborted, the newest value is checked next), outbound
    connections are pooled and capped, and another user's check still works;
 3. an enumerating client gets at most the availability budget (50 names a second per
    uid by default), while a person typing sees each answer at once;
 4. failed logins from one uid do not lock the owner out from theirs, and parallel
    wrong logins cannot overshoot the limit (the count is reserved before hashing);
 5. a wrong password costs the same time for an account hashed with older parameters
    as for an unknown name;
 6. a connection holding no session is closed with `bye` after --idle-connection-timeout
    without a request, one holding a session is kept; the per-uid connection default
    leaves room for other users;
 7. answers leave in request order: `verify` then `ping`, and operations on sessions
    owned by another event loop, never let `pong` overtake;
 8. the database file renamed or removed while running: signups are refused, logged at
    critical, not acknowledged into a file nobody will open again;
 9. numeric options out of range, and per-uid limits above their totals, are refused at
    start with a clear error;
10. pipelined cheap requests (describe, ping) from clients that never read do not freeze
    the daemon: another client's ping stays prompt (backpressure, bounded turns).
11. a connect/disconnect flood from one uid leaves another uid's connect, ping and login
    prompt (short accept queue, per-uid connect rate refused with rate_limited + bye);
12. many connections holding half lines: the daemon-wide buffer budget drops the biggest
    holders with bye, RSS stays bounded, a quiet client is still answered;
13. a `set` past the field's byte cap is refused with value_too_long, the field keeps
    its value, describe states every cap;
14. other uids' failures past the global per-identity limit, then the owner's typo: the
    owner still logs in with the right password, the guessing uids stay throttled;
15. a client holding a session that stops reading is closed after the idle timeout;
16. clients that flood username `set`s without reading and then leave cost nothing once
    gone: what they left unread in their sockets is dropped, not handled, so their
    connections close at once and another uid's new connection is answered promptly;
17. started with a low open-file limit (ulimit -n 1024), the daemon warns that
    --max-connections does not fit and lowers the connection limits to what does: a uid
    holding connections is refused at its share, another uid still gets in;
18. several uids together filling the whole hash queue (each below its own bound) do not
    shut another uid out of logging in: the biggest holder's newest job gives way;
19. availability checks delayed by the budget past --availability-timeout are answered,
    not reported as availability.unreachable: the timeout runs from the check's start;
20. one uid flooding username `set`s on many connections (never reading) does not delay
    another uid's new connection and ping: an event loop's turns are shared per uid, not
    per connection (FairTurns);
21. many uids each within their limit cannot fill the daemon for everyone else: a full
    daemon displaces one connection of the biggest holder to greet another uid;
22. one uid holding many sessions (64 connections x 16; --long 1,024 x 16) and asking for
    its `sessions` (pages of 500), then `status`, again as soon as each answer comes does
    not delay another uid's hello and ping beyond a small multiple of their idle figures:
    `sessions` answers from the owner's own index, a page at a time, and its work counts
    against the uid's share of the event loop like any other request (issue 27, item 3).
(Queued signups and logins of a client still connected are finished at SIGTERM within the
grace period: sigterm_under_load.py checks that each gets its result.)

usage: hostile_neighbour.py path/to/signupd [--long]   (parts 1, 4, 11, 14, 18, 20, 21 and 22 need root: setpriv)
"""
import json
import os
import re
import random
import socket
import statistics
import subprocess
import sys
import textwrap
import time

from harness import FAST_HASH, Checks, Client, Daemon, QuietHandler, as_uid, serve_http

binary = sys.argv[1]
long = "--long" in sys.argv[2:]
checks = Checks("hostile neighbour")
is_root = os.geteuid() == 0
# A hash that takes tens of milliseconds, so that queueing shows.
MEDIUM_HASH = ["--argon2-ops", "2", "--argon2-memory-kib", "16384"]

FLOOD = r'''
import json, socket, sys, time
path, connections, sessions = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
socks = []
for c in range(connections):
    s = socket.socket(socket.AF_UNIX); s.settimeout(60); s.connect(path)
    r = s.makefile("rb"); r.readline()
    lines = []
    for n in range(sessions):
        name = "nobody%dx%d" % (c, n)
        lines.append({"op": "open", "form": "login"})
        lines.append({"op": "set", "field": "username", "value": name})
        lines.append({"op": "set", "field": "password", "value": "wrong password"})
        lines.append({"op": "submit", "id": 1000 + n})
    s.sendall(b"".join(json.dumps(l).encode() + b"\n" for l in lines))
    socks.append((s, r))
refused = 0
for s, r in socks:
    s.sendall(b'{"op":"ping","id":1}\n')
    while True:
        m = json.loads(r.readline())
        if m.get("event") == "error" and m.get("code") == "rate_limited":
            refused += 1
        if m.get("event") == "pong":
            break
print(refused, flush=True)
# Keep flooding until told to stop: every answer (result or refusal) is followed by a new
# submit, so the uid's queue stays full for as long as the other uid measures.
import threading


def sustain(s, r):
    counter = 0
    while True:
        line = r.readline()
        if not line:
            return
        m = json.loads(line)
        sid = m.get("session")
        if sid and (m.get("event") == "result" or (m.get("event") == "error" and m.get("code") == "rate_limited")):
            counter += 1
            lines = [{"op": "close", "session": sid}, {"op": "open", "form": "login"},
                     {"op": "set", "field": "username", "value": "again%dx%d" % (s.fileno(), counter)},
                     {"op": "set", "field": "password", "value": "wrong password"}, {"op": "submit"}] \
                if m.get("event") == "result" else [{"op": "submit", "session": sid}]
            s.sendall(b"".join(json.dumps(l).encode() + b"\n" for l in lines))


for s, r in socks:
    s.settimeout(None)
    threading.Thread(target=sustain, args=(s, r), daemon=True).start()
sys.stdin.readline()  # until told to stop
'''


def as_nobody(script, *args, **kw):
    return subprocess.Popen(as_uid(65534, [sys.executable, "-c", textwrap.dedent(script)]) + list(args),
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)


def login(c, name, password):
    session = c.open("login")
    c.send("set", field="username", value=name)
    c.send("set", field="password", value=password)
    c.barrier()
    start = time.monotonic()
    result = c.submit_and_wait()
    c.reply(c.send("close", session=session))  # a connection holds at most 16 sessions
    return result, time.monotonic() - start


def public_daemon(args):
    d = Daemon(binary, args=args + ["--socket-mode", "0666"]).start()
    os.chmod(d.directory, 0o711)
    return d


# ---- 1. fair, bounded, cancellable hashing
def part_1():
    if is_root:
        daemon = public_daemon(MEDIUM_HASH + ["--hash-concurrency", "1"])
        try:
            c = Client(daemon.sock)
            c.fill_signup("rootuser", "right password")
            checks.check(c.submit_and_wait()["ok"] is True, "signup rootuser")
            idle = sorted(login(c, "rootuser", "right password")[1] for _ in range(5))
            idle_p50 = idle[len(idle) // 2]
            connections, per = (13, 16) if long else (8, 16)
            flood = as_nobody(FLOOD, daemon.sock, str(connections), str(per))
            refused = int(flood.stdout.readline() or -1)
            # The uid's queue holds 64 (the default); the rest is refused (a few may slip in as jobs finish).
            checks.check(refused >= connections * per - 64 - 16, "a flood past the per-uid queue bound is refused promptly: %d of %d" % (refused, connections * per))
            busy = sorted(login(c, "rootuser", "right password")[1] for _ in range(5 if not long else 101))
            busy_p50, busy_p99 = busy[len(busy) // 2], busy[int(len(busy) * 0.99)]
            print("  root login idle p50 %.3f s, max %.3f s; while nobody floods (%d connections x %d sessions): p50 %.3f s, p99 %.3f s, daemon RSS %d MiB"
                  % (idle_p50, idle[-1], connections, per, busy_p50, busy_p99, daemon.rss_kib() // 1024))
            # Fair service: at most the flood's running job and its turn ahead of ours.
            checks.check(busy_p50 < idle_p50 * 4 + 0.05, "another uid's login is not starved: %.3f s vs %.3f s idle" % (busy_p50, idle_p50))
            # The flooder goes away: its queued jobs must not run, so SIGTERM is prompt.
            flood.stdin.write("\n"); flood.stdin.flush(); flood.wait(timeout=30)
            flood = as_nobody(FLOOD, daemon.sock, "2", "16")
            flood.stdout.readline()
            flood.kill(); flood.wait()
            start = time.monotonic()
            checks.check(daemon.stop() == 0, "daemon exits 0")
            stop_time = time.monotonic() - start
            checks.check(stop_time < idle_p50 * 4 + 1.0, "SIGTERM does not wait for a gone client's hashes: %.2f s" % stop_time)
        finally:
            daemon.stop()
    else:
        print("SKIP part 1: needs root to run a client as another user")


# ---- 2. availability checks: latest only, aborted when superseded, pooled
def part_2():
    import threading

    http_state = {"requests": 0, "open": 0, "max_open": 0, "names": []}
    lock = threading.Lock()


    class SlowService(QuietHandler):
        protocol_version = "HTTP/1.1"

        def setup(self):
            super().setup()
            with lock:
                http_state["open"] += 1
                http_state["max_open"] = max(http_state["max_open"], http_state["open"])

        def finish(self):
            super().finish()
            with lock:
                http_state["open"] -= 1

        def do_GET(self):
            with lock:
                http_state["requests"] += 1
                http_state["names"].append(self.path.rsplit("/", 1)[-1])
            time.sleep(0.2)
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()


    service = serve_http(SlowService)
    daemon = Daemon(binary, args=FAST_HASH + ["--availability-url", "http://127.0.0.1:%d/users/{username}" % service.server_address[1]]).start()
    try:
        burst = 20000 if long else 3000
        c = Client(daemon.sock)
        c.open("signup")
        c.send_raw(b"".join(b'{"op":"set","field":"username","value":"burst%d"}\n' % n for n in range(burst)))
        c.barrier()
        fds_during = daemon.fd_count()
        rss_during = daemon.rss_kib()
        other = Client(daemon.sock)
        other.open("signup")
        other.send("set", field="username", value="someoneelse")
        got, _ = other.until(lambda m: m.get("event") == "validation" and m["field"] == "username" and m["state"] in ("ok", "failed"))
        checks.check(got["state"] == "ok", "another session's check works during the burst: %s" % got)
        got, _ = c.until(lambda m: m.get("event") == "validation" and m["field"] == "username" and m["state"] in ("ok", "failed"))
        print("  burst of %d sets: %d HTTP requests, at most %d connections open at the service, %d descriptors, %d MiB RSS"
              % (burst, http_state["requests"], http_state["max_open"], fds_during, rss_during // 1024))
        checks.check(got["state"] == "ok" and "burst%d" % (burst - 1) in http_state["names"], "the newest value is checked: %s" % got)
        # Before: 13,253 requests for 20,000 sets. How many land while the burst is read
        # depends on the machine's load (3-12 seen on a busy 2-core one); dozens would still be a bug.
        checks.check(http_state["requests"] <= 32, "a burst of %d sets costs a handful of HTTP requests: %d" % (burst, http_state["requests"]))
        checks.check(http_state["max_open"] <= 16, "outbound connections are capped: %d" % http_state["max_open"])
        checks.check(fds_during < 64, "descriptors stay few during the burst: %d" % fds_during)
    finally:
        checks.check(daemon.stop() == 0, "daemon exits 0")
        service.shutdown()


# ---- 3. enumeration is bounded by the availability budget; typing is not delayed
def part_3():
    daemon = Daemon(binary, args=FAST_HASH).start()
    try:
        # A person typing ten keys a second sees every answer at once.
        p = Client(daemon.sock)
        p.open("signup")
        worst = 0
        for prefix in range(3, 12):
            sent = time.monotonic()
            p.send("set", field="username", value="alexandersmith"[:prefix])
            p.until(lambda m: m.get("event") == "validation" and m["field"] == "username" and m["state"] in ("ok", "failed"))
            worst = max(worst, time.monotonic() - sent)
            time.sleep(0.1)  # typing speed: ten keys a second
        print("  a person typing ten keys a second: slowest answer %.1f ms" % (worst * 1000))
        checks.check(worst < 0.5, "a person typing is not delayed: slowest answer %.3f s" % worst)
        c = Client(daemon.sock)
        sessions = [c.open("signup") for _ in range(4)]
        duration = 10 if long else 2
        answered = 0
        start = time.monotonic()
        n = 0
        while time.monotonic() - start < duration:
            for sid in sessions:
                n += 1
                c.send("set", session=sid, field="username", value="enum%d" % n)
            got = 0
            while got < len(sessions):
                m = c.read()
                if m.get("event") == "validation" and m["field"] == "username" and m["state"] in ("ok", "failed"):
                    got += 1
            answered += got
        rate = answered / (time.monotonic() - start)
        print("  enumeration: %.0f names a second on one connection with 4 sessions" % rate)
        checks.check(rate < 50 + 100 / duration + 10, "enumeration is held to the per-uid budget: %.0f names/s" % rate)
    finally:
        checks.check(daemon.stop() == 0, "daemon exits 0")


# ---- 4. throttling per (uid, identity), reserved before hashing
def part_4():
    if is_root:
        daemon = public_daemon(FAST_HASH)
        try:
            c = Client(daemon.sock)
            c.fill_signup("alice", "alice password")
            checks.check(c.submit_and_wait()["ok"] is True, "signup alice")
            attacker = r'''
    import json, socket, sys
    s = socket.socket(socket.AF_UNIX); s.settimeout(30); s.connect(sys.argv[1]); r = s.makefile("rb"); r.readline()
    out = []
    for attempt in range(7):
        s.sendall(b"".join(json.dumps(l).encode() + b"\n" for l in [
            {"op": "open", "form": "login"}, {"op": "set", "field": "username", "value": "alice"},
            {"op": "set", "field": "password", "value": "guess %d" % attempt}, {"op": "submit"}]))
        while True:
            m = json.loads(r.readline())
            if m.get("event") == "result":
                out.append(m["message"]); break
    print(json.dumps(out))
    '''
            p = as_nobody(attacker, daemon.sock)
            out, err = p.communicate(timeout=60)
            messages = json.loads(out or "[]")
            checks.check(messages[:5] == ["Invalid username or password"] * 5 and messages[5:] == ["Too many attempts, try again later"] * 2,
                         "the guessing uid is throttled after 5 failures: %s %s" % (messages, err))
            result, _ = login(c, "alice", "alice password")
            checks.check(result["ok"] is True, "alice logs in from her own uid while the guesser is throttled: %s" % result)
            # 40 parallel wrong logins for one name: at most 5 are actually checked.
            c.fill_signup("bob", "bob password")
            c.submit_and_wait()
            parallel = 40
            racers = [Client(daemon.sock) for _ in range(4)]
            for racer in racers:
                sessions = []
                for n in range(parallel // len(racers)):
                    opened, _ = racer.reply(racer.send("open", form="login"))
                    sessions.append(opened["session"])
                lines = []
                for sid in sessions:
                    lines.append({"op": "set", "session": sid, "field": "username", "value": "bob"})
                    lines.append({"op": "set", "session": sid, "field": "password", "value": "wrong"})
                racer.send_raw(b"".join(json.dumps(l).encode() + b"\n" for l in lines))
                racer.barrier()
                racer.sessions = sessions
            for racer in racers:
                racer.send_raw(b"".join(json.dumps({"op": "submit", "session": sid}).encode() + b"\n" for sid in racer.sessions))
            results = []
            for racer in racers:
                got = 0
                while got < len(racer.sessions):
                    m = racer.read()
                    if m.get("event") == "result" or (m.get("event") == "error" and m.get("code") == "rate_limited"):
                        results.append(m.get("message"))
                        got += 1
            checked = results.count("Invalid username or password")
            checks.check(checked == 5, "of %d parallel wrong logins exactly 5 were checked: %d" % (parallel, checked))
        finally:
            checks.check(daemon.stop() == 0, "daemon exits 0")
    else:
        print("SKIP part 4: needs root to run a client as another user")


# ---- 5. wrong-password timing does not depend on the stored hash's parameters
def part_5():
    old = Daemon(binary, args=FAST_HASH).start()
    try:
        c = Client(old.sock)
        c.fill_signup("oldparams", "old password")
        checks.check(c.submit_and_wait()["ok"] is True, "signup with cheap parameters")
    finally:
        old.stop()
    new = Daemon(binary, directory=old.directory, database=old.database, args=MEDIUM_HASH).start()
    try:
        c = Client(new.sock)
        rounds = 4
        known = statistics.median(login(c, "oldparams", "wrong %d" % n)[1] for n in range(rounds))
        unknown = statistics.median(login(c, "nosuchname%d" % n, "wrong")[1] for n in range(rounds))
        print("  wrong password: account with old parameters %.1f ms, unknown name %.1f ms" % (known * 1000, unknown * 1000))
        checks.check(known > unknown * 0.6, "an account with old parameters answers no faster than an unknown name: %.4f vs %.4f" % (known, unknown))
    finally:
        checks.check(new.stop() == 0, "daemon exits 0")


# ---- 6. idle connections without sessions are closed; per-uid default leaves room
def part_6():
    daemon = Daemon(binary, args=FAST_HASH + ["--idle-connection-timeout", "1"]).start()
    try:
        holder = Client(daemon.sock)
        holder.open("signup")
        idle = Client(daemon.sock, timeout=10)
        started = time.monotonic()
        bye = idle.read()
        waited = time.monotonic() - started
        checks.check(bye["event"] == "bye" and bye["reason"].startswith("idle"), "an idle connection without sessions gets bye: %s" % bye)
        checks.check(0.9 <= waited < 5, "after the idle timeout: %.2f s" % waited)
        try:
            idle.read()
            closed = False
        except EOFError:
            closed = True
        checks.check(closed, "and is closed")
        pong, _ = holder.reply(holder.send("ping"))
        checks.check(pong["event"] == "pong", "a connection holding a session is kept past the idle timeout")
    finally:
        checks.check(daemon.stop() == 0, "daemon exits 0")
    # Many clients that each stay under --max-output-bytes but never read: the total is capped.
    daemon = Daemon(binary, args=FAST_HASH + ["--max-buffered-bytes", "65536"]).start()
    try:
        readers_not = []
        dropped = 0
        for n in range(3):
            r = Client(daemon.sock)
            r.open("signup")
            try:
                r.send_raw(b"".join(b'{"op":"set","field":"password","value":"%s"}\n' % (b"ab" if i % 2 else b"abcdef") for i in range(6000)))  # each set flips the validation
            except (BrokenPipeError, ConnectionResetError):  # dropped while we were still writing
                dropped += 1
                continue
            readers_not.append(r)
        for r in readers_not:
            try:
                while r.read().get("event") != "bye":
                    pass
                dropped += 1
            except (EOFError, ConnectionResetError):  # closed with output unread: the bye may be lost
                dropped += 1
        checks.check(dropped >= 1 and "dropping a client over the buffer budget" in daemon.log(),
                     "clients that never read are dropped at the total output budget (%d dropped)" % dropped)
        fine = Client(daemon.sock)
        pong, _ = fine.reply(fine.send("ping"))
        checks.check(pong["event"] == "pong", "a client that reads is still served")
    finally:
        checks.check(daemon.stop() == 0, "daemon exits 0")
    daemon = Daemon(binary, args=FAST_HASH).start()
    try:
        c = Client(daemon.sock)
        hello_limits = c.hello["limits"]
        out = " ".join(subprocess.run([binary, "--help"], capture_output=True, text=True).stdout.split())
        checks.check("--max-connections-per-user" in out and "(default: 1024)" in out.split("--max-connections-per-user", 1)[1][:400],
                     "the per-uid connection default is 1024 of 16384")
    finally:
        checks.check(daemon.stop() == 0, "daemon exits 0")


# ---- 7. answers in request order, across event loops
def part_7():
    daemon = Daemon(binary, args=FAST_HASH + ["--threads", "4", "--max-expensive-requests-per-second", "1000000"]).start()
    try:
        owner = Client(daemon.sock)
        sid = owner.open("signup")
        # Connections land on event loops round-robin: among eight, most are on another loop than the owner.
        viewers = [Client(daemon.sock) for _ in range(8)]
        total = 10000 if long else 1000
        token = "A" * 43
        out_of_order = 0
        sent = 0
        for v in viewers:
            attached, _ = v.reply(v.send("attach", session=sid))
            checks.check(attached["event"] == "attached", "viewer attached")
        per = total // len(viewers)
        rng = random.Random(11)
        for v in viewers:
            lines = []
            for n in range(per):
                v.next_id += 1
                op = rng.choice(["verify", "set", "snapshot", "locale", "sessions", "ping", "ping"])
                if op == "verify":
                    lines.append({"op": "verify", "token": token, "id": v.next_id})
                elif op == "locale":
                    lines.append({"op": "locale", "session": sid, "locale": rng.choice(["en", "zh-CN"]), "id": v.next_id})
                elif op == "sessions":
                    lines.append({"op": "sessions", "id": v.next_id})
                elif op == "set":
                    lines.append({"op": "set", "session": sid, "field": "username", "value": "v%dn%d" % (viewers.index(v), n), "id": v.next_id})
                else:
                    lines.append({"op": op, "id": v.next_id, **({"session": sid} if op == "snapshot" else {})})
            v.next_id += 1
            lines.append({"op": "ping", "id": v.next_id})  # a set that changes nothing has no answer: end on a ping
            v.send_raw(b"".join(json.dumps(l).encode() + b"\n" for l in lines))
            sent += per + 1
        for v in viewers:
            last = 0
            while last < v.next_id:
                m = v.read()
                i = m.get("id")
                if i is None:
                    continue
                if i < last:
                    out_of_order += 1
                last = max(last, i)
            # Answers that would come after the final pong still show up before this one's.
            final = v.send("ping")
            while True:
                m = v.read()
                if m.get("id") == final:
                    break
                if m.get("id") is not None:
                    out_of_order += 1
        print("  %d pipelined requests across event loops, %d out of order" % (sent, out_of_order))
        checks.check(out_of_order == 0, "replies in request order: %d out of order of %d" % (out_of_order, sent))
        c = Client(daemon.sock)
        order = []
        for _ in range(20):
            c.send("verify", token=token)
            c.send("ping")
            first = c.read()
            order.append(first["event"])
            c.read()
        checks.check(set(order) == {"error"}, "verify's answer precedes the next ping's pong: %s" % order)
    finally:
        checks.check(daemon.stop() == 0, "daemon exits 0")


# ---- 8. the store notices its file replaced or removed
def part_8():
    for how in ("rename", "remove"):
        daemon = Daemon(binary, args=FAST_HASH).start()
        try:
            c = Client(daemon.sock)
            c.fill_signup("before%s" % how, "password")
            checks.check(c.submit_and_wait()["ok"] is True, "signup before the file is touched")
            if how == "rename":
                os.rename(daemon.database, daemon.database + ".moved")
            else:
                os.unlink(daemon.database)
            c.fill_signup("after%s" % how, "password")
            result = c.submit_and_wait()
            checks.check(result["ok"] is False, "a signup after the file was %sd is refused: %s" % (how, result))
            checks.check("critical" in daemon.log() and "database file" in daemon.log(), "and logged at critical (%s)" % how)
        finally:
            checks.check(daemon.stop() == 0, "daemon exits 0")


# ---- 9. numeric options are range-checked at start
def part_9():
    for option, value in [("--token-lifetime", "9223372036854775807"), ("--max-line-bytes", "9223372036854775807"),
                          ("--max-queued-hashes-per-user", "0"), ("--argon2-ops", "18446744073709551615"), ("--threads", "100000")]:
        d = Daemon(binary, args=[option, value])
        run = subprocess.run([binary, "--socket", d.sock, "--database", d.database, option, value], capture_output=True, text=True, timeout=30)
        checks.check(run.returncode != 0 and option in run.stderr and "between" in run.stderr,
                     "%s %s is refused at start: %d %s" % (option, value, run.returncode, run.stderr.strip()))
    # A per-uid limit above the total is a contradiction, refused with both named.
    for per_user, total in [(("--max-connections-per-user", "100000"), ("--max-connections", "16384")),
                            (("--max-queued-hashes-per-user", "1000"), ("--max-queued-hashes", "256"))]:
        d = Daemon(binary, args=[])
        run = subprocess.run([binary, "--socket", d.sock, "--database", d.database, *per_user, *total], capture_output=True, text=True, timeout=30)
        checks.check(run.returncode == 64 and per_user[0] in run.stderr and total[0] + " " + total[1] in run.stderr and "cannot exceed" in run.stderr,
                     "%s above %s is refused at start: %d %s" % (" ".join(per_user), " ".join(total), run.returncode, run.stderr.strip()))


PIPELINER = r'''
import socket, sys
path, connections, count, op = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
line = ('{"op":"%s"}\n' % op).encode()
socks = []
for c in range(connections):
    s = socket.socket(socket.AF_UNIX); s.connect(path); s.setblocking(False)
    data = line * count
    try:
        s.send(data)  # as much as the kernel takes at once; the rest is never sent either
    except BlockingIOError:
        pass
    socks.append(s)
print("ready", flush=True)
sys.stdin.readline()  # never reads; holds the connections until told to stop
'''


def victim_pings(path, seconds):
    latencies = []
    first = None
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        start = time.monotonic()
        # A blocking connect waits for room in a full accept queue (with a timeout it
        # would fail at once with EAGAIN), as a client would wait.
        s = socket.socket(socket.AF_UNIX); s.connect(path); s.settimeout(30)
        r = s.makefile("rb"); r.readline()
        s.sendall(b'{"op":"ping","id":1}\n')
        while json.loads(r.readline()).get("event") != "pong":
            pass
        s.close()
        latencies.append(time.monotonic() - start)
        time.sleep(0.2)  # a client's pace, not synchronisation
    return latencies


# ---- 10. pipelining clients that never read cannot freeze the daemon
def part_10():
    attacks = [(50, 3000, "describe"), (50, 60000, "ping")] if long else [(10, 3000, "describe")]
    for connections, count, op in attacks:
        daemon = public_daemon(FAST_HASH)
        try:
            run = as_nobody if is_root else (lambda script, *a: subprocess.Popen([sys.executable, "-c", script] + list(a), stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True))
            attacker = run(PIPELINER, daemon.sock, str(connections), str(count), op)
            checks.check(attacker.stdout.readline().strip() == "ready", "attacker connected")
            order = victim_pings(daemon.sock, 3 if not long else 6)
            lat = sorted(order)
            print("  first pings: %s" % " ".join("%.3f" % x for x in order[:4]))
            p50, p99 = lat[len(lat) // 2], lat[min(len(lat) - 1, int(len(lat) * 0.99))]
            print("  victim ping while %d connections x %d %s never read: p50 %.3f s, p99 %.3f s, max %.3f s (%d pings)"
                  % (connections, count, op, p50, p99, lat[-1], len(lat)))
            # Before backpressure: 2.9 s (10x3000), 13.9 s (50x3000), the daemon serving nothing
            # meanwhile. Now the worst is the attack's first second, while every attacking
            # connection fills its socket buffer; the bound allows for a shared 2-core debug build.
            checks.check(p50 < 0.1 and lat[-1] < (2.0 if long else 1.0),
                         "another client's ping stays prompt under %dx%d pipelined %s: p50 %.3f s, max %.3f s" % (connections, count, op, p50, lat[-1]))
            attacker.stdin.write("\n"); attacker.stdin.flush(); attacker.wait(timeout=30)
        finally:
            daemon.stop()


CONNECT_FLOOD = r"""
import socket, sys, threading, time
path, threads, seconds = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
counts = {"connected": 0, "refused": 0, "failed": 0, "as documented": 0}
lock = threading.Lock()
print("ready", flush=True)
end = time.monotonic() + seconds


def hammer(n):
    while time.monotonic() < end:
        s = socket.socket(socket.AF_UNIX)
        s.settimeout(5)
        try:
            s.connect(path)
            if n % 2:  # half read the greeting (or the refusal), half close at once
                got = s.recv(4096)
                refused = b'"error"' in got
                while refused and got.count(b"\n") < 2:  # a refusal is an error, then bye, then the close
                    chunk = s.recv(4096)
                    if not chunk:
                        break
                    got += chunk
                with lock:
                    if refused:
                        counts["refused"] += 1
                        counts["as documented"] += b'"code":"rate_limited"' in got and b'"event":"bye"' in got
                    else:
                        counts["connected"] += 1
            else:
                with lock:
                    counts["connected"] += 1
        except OSError:
            with lock:
                counts["failed"] += 1
        finally:
            s.close()


workers = [threading.Thread(target=hammer, args=(n,)) for n in range(threads)]
for w in workers:
    w.start()
for w in workers:
    w.join()
print("%d %d %d %d" % (counts["connected"], counts["refused"], counts["failed"], counts["as documented"]), flush=True)
"""


def percentiles(values):
    values = sorted(values)
    return values[len(values) // 2], values[min(len(values) - 1, int(len(values) * 0.99))], values[-1]


def victim_logins_and_pings(path, seconds):
    """Another uid's connect+hello+ping and login latencies, one after the other, for `seconds`."""
    c = Client(path)
    pings, logins, refused = [], [], []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pings.extend(victim_pings(path, 0.01))
        result, took = login(c, "victim", "victim password")
        if not result["ok"]:
            refused.append(result)
        logins.append(took)
        time.sleep(0.05)  # a client's pace, not synchronisation
    c.close()
    checks.check(not refused, "every login of the victim succeeds: %s" % refused[:3])
    return pings, logins


# ---- 11. a connect/disconnect flood from one uid does not stall another uid
def part_11():
    if not is_root:
        print("SKIP part 11: needs root to run a client as another user")
        return
    daemon = public_daemon(FAST_HASH)
    try:
        c = Client(daemon.sock)
        c.fill_signup("victim", "victim password")
        checks.check(c.submit_and_wait()["ok"] is True, "signup victim")
        c.close()
        idle_pings, idle_logins = victim_logins_and_pings(daemon.sock, 2)
        threads, seconds = (32, 20) if long else (16, 6)
        flood = as_nobody(CONNECT_FLOOD, daemon.sock, str(threads), str(seconds))
        checks.check(flood.stdout.readline().strip() == "ready", "flooder started")
        busy_pings, busy_logins = victim_logins_and_pings(daemon.sock, seconds - 1)
        out, err = flood.communicate(timeout=120)
        connected, refused, failed, documented = (int(x) for x in (out.split() or ["0", "0", "0", "0"]))
        ip, bp, il, bl = (percentiles(x) for x in (idle_pings, busy_pings, idle_logins, busy_logins))
        print("  connect flood, %d threads for %d s: %d connections, %d refused at the door, %d failed to connect" % (threads, seconds, connected, refused, failed))
        print("  victim ping (connect+hello+ping) idle p50 %.3f p99 %.3f max %.3f s; during the flood p50 %.3f p99 %.3f max %.3f s (%d)" % (ip + bp + (len(busy_pings),)))
        print("  victim login idle p50 %.3f p99 %.3f max %.3f s; during the flood p50 %.3f p99 %.3f max %.3f s (%d)" % (il + bl + (len(busy_logins),)))
        checks.check(connected + refused > 500, "the flood is a real one: %d connections" % (connected + refused))
        # Before: p50 = max 6.7-7.2 s (a 4,096-deep accept queue kept full). The bounds allow for a
        # shared 2-core machine running a debug build (one sample of 3.2 s seen under a load of 8).
        checks.check(bp[0] < 0.5 and bp[2] < 4.0, "another uid's ping stays prompt under a connect flood: p50 %.3f s, max %.3f s" % (bp[0], bp[2]))
        checks.check(bl[2] < 4.0, "another uid's login stays prompt under a connect flood: max %.3f s" % bl[2])
        checks.check(refused > 0 and documented == refused, "the flooding uid is refused at the door past its connect rate, each with rate_limited then bye: %d of %d" % (documented, refused))
    finally:
        checks.check(daemon.stop() == 0, "daemon exits 0")


def unread_by_peer(s):
    """Bytes this socket sent that the other end has not read yet (SIOCOUTQ)."""
    import fcntl
    import struct
    import termios
    return struct.unpack("i", fcntl.ioctl(s, termios.TIOCOUTQ, b"\0\0\0\0"))[0]


# ---- 12. a total budget on buffered input and unread output: the biggest holders pay
def part_12():
    limit = 2 << 20
    daemon = Daemon(binary, args=FAST_HASH + ["--max-buffered-bytes", str(limit)]).start()
    try:
        quiet = Client(daemon.sock)
        quiet.open("signup")
        # The phone library (some 4 MiB with its metadata) opens just after start whatever the
        # load, so a serving daemon holds it: a baseline taken before it was open counted it as
        # the flood's, by timing (as memory_return.py found). A number's verdict comes once it is.
        phone = Client(daemon.sock)
        phone.open("phone-signup")
        phone.send("set", field="phone", value="+86 138-0013-8000")
        phone.until(lambda m: m.get("event") == "validation" and m.get("field") == "phone" and m.get("state") not in ("empty", "validating"))
        phone.close()
        rss_before = daemon.rss_kib()
        holders = []
        count = 1000 if long else 300
        half = b'{"op":"set","field":"username","value":"' + b"x" * 60000  # a line never finished
        for _ in range(count):
            s = socket.socket(socket.AF_UNIX)
            s.connect(daemon.sock)  # blocking: waits for room in the accept queue
            try:
                s.sendall(half)
            except (BrokenPipeError, ConnectionResetError):
                pass  # dropped already
            holders.append(s)
        # Wait until the daemon has read everything it was sent (or closed the connection).
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and any(unread_by_peer(s) > 0 for s in holders):
            quiet.reply(quiet.send("ping"))  # the quiet user keeps being answered meanwhile
        rss_after = daemon.rss_kib()
        # The dropped ones are hung up on (POLLHUP), without reading: collect them until a
        # second passes with no more.
        import select
        poller = select.poll()
        for s in holders:
            poller.register(s, select.POLLRDHUP)
        hung_up = set()
        while True:
            new = {fd for fd, event in poller.poll(1000) if event & (select.POLLHUP | select.POLLRDHUP)} - hung_up
            if not new:
                break
            hung_up |= new
            for fd in new:
                poller.unregister(fd)
        dropped = len(hung_up)
        sample = next(s for s in holders if s.fileno() in hung_up) if hung_up else None
        said = sample.recv(1 << 20) if sample else b""
        checks.check(b"over budget" in said, "a dropped one is told why (bye over budget): %r" % said[-160:])
        kept = count - dropped
        print("  %d connections each holding a 60,000-byte half line, budget %d bytes: %d dropped, %d kept (%d bytes); RSS %d -> %d KiB"
              % (count, limit, dropped, kept, kept * len(half), rss_before, rss_after))
        checks.check(dropped > 0 and "dropping a client over the buffer budget" in daemon.log(), "the biggest holders are dropped with bye at the total budget: %d" % dropped)
        checks.check(kept * len(half) <= limit, "what is kept fits the budget: %d bytes" % (kept * len(half)))
        checks.check(rss_after - rss_before < 16 * 1024, "daemon RSS stays bounded: +%d KiB for %d KiB sent" % (rss_after - rss_before, count * len(half) // 1024))
        quiet.send("set", field="username", value="quietperson")
        got, _ = quiet.until(lambda m: m.get("event") == "validation" and m["field"] == "username" and m["state"] in ("ok", "failed"))
        checks.check(got["state"] == "ok", "the quiet user, holding nothing, is still answered: %s" % got)
        for s in holders:
            s.close()
        # Every drop is logged, one peer's summarised (README "Logs that say who"): the first
        # three as lines, the rest counted by a summary line, written at the latest on stop.
        checks.check(daemon.stop() == 0, "daemon exits 0")
        lines = [line for line in daemon.log().splitlines() if "dropping a client over the buffer budget" in line]
        single = [line for line in lines if "more like it not logged separately" not in line]
        summarised = sum(int(n) for line in lines for n in re.findall(r": (\d+) more like it", line))
        checks.check(len(single) <= 3 and len(single) + summarised == dropped,
                     "every drop is logged, summarised: %d lines + %d in summaries for %d drops" % (len(single), summarised, dropped))
    finally:
        checks.check(daemon.stop() == 0, "daemon exits 0")


# ---- 13. values past the field's byte cap are refused, not stored
def part_13():
    daemon = Daemon(binary, args=FAST_HASH).start()
    try:
        c = Client(daemon.sock)
        c.send("describe")
        description = c.until(lambda m: m.get("event") == "description")[0]
        caps = {(f["name"], field["name"]): field["rules"].get("maxInputBytes") for f in description["forms"] for field in f["fields"]}
        checks.check(all(caps.values()) and caps[("signup", "password")] == 4096 and caps[("signup", "username")] == 1020,
                     "describe states every field's byte cap: %s" % caps)
        c.open("signup")
        c.send("set", field="password", value="pass word")
        c.barrier()
        for field, cap in (("password", 4096), ("repeatedPassword", 4096), ("username", 1020)):
            rid = c.send("set", field=field, value="x" * (cap + 1))
            error, _ = c.reply(rid)
            checks.check(error.get("event") == "error" and error.get("code") == "value_too_long",
                         "a %s of %d bytes is refused: %s" % (field, cap + 1, error))
        rid = c.send("snapshot")
        snapshot, _ = c.until(lambda m: m.get("event") == "validation" and m.get("field") == "password")
        checks.check(snapshot["state"] == "ok", "the password keeps its previous value: %s" % snapshot)
        # 16 sessions x 3 fields x 60 KB sent: nothing past the caps is held.
        rss_before = daemon.rss_kib()
        for _ in range(15):
            c.open("signup")
        lines = []
        for n in range(16 * 20):
            for field in ("username", "password", "repeatedPassword"):
                lines.append({"op": "set", "field": field, "value": "%d" % n + "y" * 60000})
        refused = 0
        for chunk in range(0, len(lines), 30):
            c.send_raw(b"".join(json.dumps(l).encode() + b"\n" for l in lines[chunk:chunk + 30]))
            refused += sum(1 for m in c.barrier() if m.get("code") == "value_too_long")
        rss_after = daemon.rss_kib()
        print("  %d of %d sets of 60 KB values refused (value_too_long); RSS %d -> %d KiB" % (refused, len(lines), rss_before, rss_after))
        checks.check(refused == len(lines), "every value past its cap is refused: %d of %d" % (refused, len(lines)))
        pong, _ = c.reply(c.send("ping"))
        checks.check(pong["event"] == "pong", "the connection still works")
    finally:
        checks.check(daemon.stop() == 0, "daemon exits 0")


GUESSER = r"""
import json, socket, sys
path, name, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
s = socket.socket(socket.AF_UNIX); s.settimeout(30); s.connect(path); r = s.makefile("rb"); r.readline()
out = []
for attempt in range(count):
    s.sendall(b"".join(json.dumps(l).encode() + b"\n" for l in [
        {"op": "open", "form": "login"}, {"op": "set", "field": "username", "value": name},
        {"op": "set", "field": "password", "value": "guess %d" % attempt}, {"op": "submit"}]))
    while True:
        m = json.loads(r.readline())
        if m.get("event") == "result":
            out.append(m["message"]); break
    s.sendall(b'{"op":"close"}\n')
print(json.dumps(out))
"""


# ---- 14. other uids' failures cannot lock the owner out, even after a typo of theirs
def part_14():
    if not is_root:
        print("SKIP part 14: needs root to run clients as other users")
        return
    per_uid = 2  # --login-attempts-per-minute; the global limit is ten times that
    daemon = public_daemon(FAST_HASH + ["--login-attempts-per-minute", str(per_uid)])
    try:
        owner = Client(daemon.sock)
        owner.fill_signup("carol", "carol password")
        checks.check(owner.submit_and_wait()["ok"] is True, "signup carol")
        attackers = 12 if long else 10
        throttled = 0
        for n in range(attackers):
            uid = str(42001 + n)
            p = subprocess.Popen(as_uid(uid, [sys.executable, "-c", GUESSER, daemon.sock, "carol", str(per_uid + 1)]),
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            out, err = p.communicate(timeout=60)
            messages = json.loads(out or "[]")
            checks.check(messages[:per_uid] == ["Invalid username or password"] * per_uid, "uid %s's own %d guesses are checked: %s %s" % (uid, per_uid, messages, err))
            throttled += messages[per_uid:] == ["Too many attempts, try again later"]
        checks.check(throttled == attackers, "each guessing uid is throttled past its allowance: %d of %d" % (throttled, attackers))
        # The identity has had attackers x per_uid failures, past the global limit. The owner makes a typo, then logs in.
        typo, _ = login(owner, "carol", "carol pasword")
        checks.check(typo["ok"] is False and typo["message"] == "Invalid username or password", "the owner's typo is checked, not refused: %s" % typo)
        right, _ = login(owner, "carol", "carol password")
        checks.check(right["ok"] is True, "the owner then logs in with the right password: %s" % right)
        again = json.loads(subprocess.run(as_uid(42001, [sys.executable, "-c", GUESSER, daemon.sock, "carol", "1"]),
                                          capture_output=True, text=True, timeout=60).stdout or "[]")
        checks.check(again == ["Too many attempts, try again later"], "while a guessing uid stays throttled: %s" % again)
    finally:
        checks.check(daemon.stop() == 0, "daemon exits 0")


# ---- 15. a client holding a session that stops reading is closed after the idle timeout
def part_15():
    import select
    daemon = Daemon(binary, args=FAST_HASH + ["--idle-connection-timeout", "1"]).start()
    try:
        reader = Client(daemon.sock)
        reader.open("signup")
        stuck = Client(daemon.sock)
        stuck.open("signup")
        started = time.monotonic()
        try:  # blocks once the daemon stops reading (its answers unread), until it hangs up
            stuck.send_raw(b'{"op":"snapshot"}\n' * 20000)  # ~3 MB of answers asked for, none read
        except (BrokenPipeError, ConnectionResetError):
            pass
        # Wait for the daemon to hang up (POLLHUP) without reading a byte.
        poller = select.poll()
        poller.register(stuck.sock, select.POLLRDHUP)
        events = poller.poll(15000)
        waited = time.monotonic() - started
        hung_up = any(e & (select.POLLHUP | select.POLLRDHUP) for _, e in events)
        print("  a session holder that stopped reading: closed after %.1f s (timeout 1 s)" % waited if hung_up else "  not closed in 15 s")
        checks.check(hung_up and "closing a client that stopped reading" in daemon.log(), "a session holder that stopped reading is closed: %s after %.1f s" % (events, waited))
        # helper-41: the close came after twice the timeout in 5 of 13 runs (the timer looked
        # again a whole timeout after the stuck close was due).
        checks.check(waited < 1.9, "closed within the timeout (1 s) and well before twice it: %.2f s" % waited)
        pong, _ = reader.reply(reader.send("ping"))
        checks.check(pong["event"] == "pong", "a session holder that reads is kept past the timeout")
        # helper-40: a client holding no session that writes a big batch before reading
        # anything was closed as idle ("no request for N seconds"), and nothing was logged.
        writer = Client(daemon.sock)
        try:
            writer.send_raw(b'{"op":"describe","form":"signup"}\n' * 20000)  # ~600 KB, none of the answers read
        except (BrokenPipeError, ConnectionResetError):
            pass
        poller = select.poll()
        poller.register(writer.sock, select.POLLRDHUP)
        hung_up = any(e & (select.POLLHUP | select.POLLRDHUP) for _, e in poller.poll(15000))
        checks.check(hung_up and daemon.log().count("closing a client that stopped reading") == 2,
                     "a client without sessions that writes before it reads is closed as stuck, and logged: %s" % hung_up)
    finally:
        checks.check(daemon.stop() == 0, "daemon exits 0")


SET_FLOOD = r'''
import socket, sys, time
path, connections, seconds = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
socks = []
for c in range(connections):
    while True:  # past the uid's connect rate the door says rate_limited: pace, as an attacker would
        s = socket.socket(socket.AF_UNIX); s.settimeout(30); s.connect(path)
        if b'"hello"' in s.recv(4096):
            break
        s.close(); time.sleep(0.05)
    s.sendall(b'{"op":"open","form":"signup"}\n' * 16)
    s.setblocking(False); socks.append(s)
print("connected", flush=True)
end, n = time.time() + seconds, 0
while time.time() < end:
    for s in socks:
        lines = b"".join(b'{"op":"set","field":"username","value":"u%d"}\n' % (n + k) for k in range(200))
        n += 200
        try: s.send(lines)
        except OSError: pass
    time.sleep(0.2)
'''


# ---- 16. a set flood's leftovers are dropped when the flooder leaves
def part_16():
    connections, seconds = (200, 10) if long else (40, 3)
    daemon = public_daemon(FAST_HASH)
    try:
        baseline = daemon.socket_count()
        run = as_nobody if is_root else (lambda script, *a: subprocess.Popen([sys.executable, "-c", textwrap.dedent(script)] + list(a), stdout=subprocess.PIPE, text=True))
        flood = run(SET_FLOOD, daemon.sock, str(connections), str(seconds))
        flood.wait(timeout=120)
        left = time.monotonic()
        # The flooder is gone; its sockets hold what it sent and the daemon never read.
        closed_after = None
        while time.monotonic() - left < 60:
            if daemon.socket_count() <= baseline + 2:
                closed_after = time.monotonic() - left
                break
            time.sleep(0.1)
        started = time.monotonic()
        other = Client(daemon.sock, timeout=30)
        pong, _ = other.reply(other.send("ping"))
        ping = time.monotonic() - started
        print("  %d flooders gone: their connections closed after %s, a new connection's ping %.0f ms, RSS %d KiB"
              % (connections, "%.1f s" % closed_after if closed_after is not None else "> 60 s", ping * 1000, daemon.rss_kib()))
        checks.check(closed_after is not None and closed_after < 5, "the connections of gone flooders close within 5 s (%s)" % closed_after)
        checks.check(pong["event"] == "pong" and ping < 2, "another uid's new connection is answered within 2 s after the flood (%.2f s)" % ping)
    finally:
        checks.check(daemon.stop() == 0, "daemon exits 0")


HOLDER = r'''
import json, socket, sys
path, count = sys.argv[1], int(sys.argv[2])
held, refused = [], None
for n in range(count):
    s = socket.socket(socket.AF_UNIX); s.settimeout(30)
    try: s.connect(path)
    except OSError as e: refused = "connect: %s" % e; break
    first = json.loads(s.makefile("rb").readline())
    if first.get("event") != "hello": refused = first.get("message"); break
    held.append(s)
print(json.dumps({"held": len(held), "refused": refused}), flush=True)
sys.stdin.readline()
'''


# ---- 17. a low open-file limit: a warning, and limits that fit
def part_17():
    import tempfile
    wrapper = tempfile.NamedTemporaryFile("w", suffix=".sh", delete=False)
    wrapper.write("#!/bin/sh\nulimit -n 1024 || exit 1\nexec %s \"$@\"\n" % os.path.abspath(binary))
    wrapper.close()
    os.chmod(wrapper.name, 0o755)
    daemon = Daemon(wrapper.name, args=FAST_HASH + ["--socket-mode", "0666"]).start()
    os.chmod(daemon.directory, 0o711)
    try:
        warned = [l for l in daemon.log().splitlines() if "open-file limit cannot hold" in l]
        print("  " + (warned[0] if warned else "no warning at start"))
        checks.check(len(warned) == 1 and "admitted=896" in warned[0], "a clear warning at start that --max-connections does not fit 1024 descriptors")
        run = as_nobody if is_root else (lambda script, *a: subprocess.Popen([sys.executable, "-c", textwrap.dedent(script)] + list(a), stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True))
        holder = run(HOLDER, daemon.sock, "200")
        held = json.loads(holder.stdout.readline())
        print("  one uid holding connections: %d admitted, then %s" % (held["held"], held["refused"]))
        checks.check(held["held"] == 56 and "limit 56" in (held["refused"] or ""), "a uid is refused at its share of what fits (56): %s" % held)
        other = Client(daemon.sock)
        pong, _ = other.reply(other.send("ping"))
        checks.check(pong["event"] == "pong" or not is_root, "another uid still connects and is answered")
        holder.stdin.write("\n"); holder.stdin.flush(); holder.wait(timeout=30)
    finally:
        os.unlink(wrapper.name)
        checks.check(daemon.stop() == 0, "daemon exits 0")


# ---- 18. a full hash queue: the biggest holder pays
def part_18():
    if not is_root:
        print("SKIP part 18: needs root to run clients as other users")
        return
    daemon = public_daemon(MEDIUM_HASH + ["--hash-concurrency", "1"])
    floods = []
    try:
        c = Client(daemon.sock)
        c.fill_signup("alice", "right password")
        checks.check(c.submit_and_wait()["ok"] is True, "signup alice")
        uids = 8 if long else 5
        for n in range(uids):
            floods.append(subprocess.Popen(as_uid(42300 + n, [sys.executable, "-c", textwrap.dedent(FLOOD), daemon.sock, "4", "16"]),
                                           stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
        refused_flood = sum(int(f.stdout.readline() or 0) for f in floods)
        results = [login(c, "alice", "right password")[0] for _ in range(8 if not long else 32)]
        ok = sum(1 for r in results if r.get("ok") is True)
        codes = sorted({r.get("code") for r in results if r.get("ok") is not True})
        print("  %d uids x 64 unknown-name logins (%d refused at once); alice's logins: %d of %d succeed %s" % (uids, refused_flood, ok, len(results), codes or ""))
        checks.check(ok == len(results), "another uid logs in while several uids fill the hash queue: %d of %d (%s)" % (ok, len(results), codes))
    finally:
        for f in floods:
            f.kill()
            f.wait()
        checks.check(daemon.stop() == 0, "daemon exits 0")


# ---- 19. a check delayed by the budget is answered, not timed out
def part_19():
    # 2 checks a second per uid (bursts of 4): the 16th session's check waits ~6 s, twice the timeout.
    connections = 2 if long else 1
    daemon = Daemon(binary, args=FAST_HASH + ["--availability-checks-per-second", "2", "--availability-timeout", "3"]).start()
    try:
        clients = [Client(daemon.sock, timeout=60) for _ in range(connections)]
        opened = [[c.open("signup") for _ in range(16)] for c in clients]
        start = time.monotonic()
        for number, (c, ids) in enumerate(zip(clients, opened)):
            for n, sid in enumerate(ids):
                c.send("set", session=sid, field="username", value="delayed%dx%d" % (number, n))
        answers = []
        for c, ids in zip(clients, opened):
            got = 0
            while got < len(ids):
                m = c.read()
                if m.get("event") == "validation" and m["field"] == "username" and m["state"] in ("ok", "failed"):
                    got += 1
                    answers.append((time.monotonic() - start, json.dumps(m)))
        late = max(t for t, _ in answers)
        unreachable = [a for a in answers if "availability.unreachable" in a[1]]
        print("  %d checks past a 2/s budget: last answered after %.1f s, %d unreachable" % (len(answers), late, len(unreachable)))
        checks.check(len(answers) == 16 * connections and late > 3, "every delayed check is answered, the last after the timeout (%.1f s)" % late)
        checks.check(not unreachable, "no delayed check is reported unreachable: %s" % unreachable[:3])
    finally:
        checks.check(daemon.stop() == 0, "daemon exits 0")


# ---- 20. an event loop is shared per uid: a set flood on many connections costs others one share
def part_20():
    if not is_root:
        print("SKIP part 20: needs root to run the flood as another user")
        return
    connections, seconds = (300, 10) if long else (100, 4)
    daemon = public_daemon(FAST_HASH)
    try:
        idle = victim_pings(daemon.sock, 1)
        flood = as_nobody(SET_FLOOD, daemon.sock, str(connections), str(seconds))
        checks.check(flood.stdout.readline().strip() == "connected", "the flooder connected %d times" % connections)
        busy = victim_pings(daemon.sock, seconds - 0.5)
        flood.wait(timeout=120)
        ip, bp = percentiles(idle), percentiles(busy)
        print("  another uid's connect+hello+ping: idle p50 %.3f p99 %.3f max %.3f s; while %d connections x 16 sessions flood sets: p50 %.3f p99 %.3f max %.3f s (%d), RSS %d KiB"
              % (ip + (connections,) + bp + (len(busy), daemon.rss_kib())))
        # Before (turns shared per connection): 0.8-4.4 s while 100 connections flooded. The
        # bound allows for a shared 2-core debug build.
        checks.check(bp[0] < 0.1 and bp[2] < 2.0, "another uid's ping stays prompt under a %d-connection set flood: p50 %.3f s, max %.3f s" % (connections, bp[0], bp[2]))
    finally:
        checks.check(daemon.stop() == 0, "daemon exits 0")


# ---- 21. many uids each within their limit cannot fill the daemon for everyone else
ROOM_HOLDER = r"""
import re
import select, socket, sys, time
path, count = sys.argv[1], int(sys.argv[2])
socks = []
for _ in range(count):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    s.settimeout(30)
    first = b""
    while b"\n" not in first:
        first += s.recv(4096)
    if b'"hello"' not in first.split(b"\n")[0]:
        print("refused")
        sys.exit(0)
    socks.append(s)
print("held %d" % len(socks), flush=True)
wait = float(sys.stdin.readline())  # how long to watch for a displacement, then report
deadline = time.monotonic() + wait
displaced = 0
open_socks = list(socks)
while open_socks and time.monotonic() < deadline:
    ready, _, _ = select.select(open_socks, [], [], max(0.0, deadline - time.monotonic()))
    for s in ready:
        data = s.recv(65536)
        if b'"displaced: ' in data:
            displaced += 1
            deadline = min(deadline, time.monotonic() + 0.5)  # a second one would come now
        open_socks.remove(s)
print("displaced %d" % displaced, flush=True)
"""


def part_21():
    if not is_root:
        print("SKIP part 21: needs root to connect as other users")
        return
    daemon = public_daemon(FAST_HASH + ["--max-connections", "20", "--max-connections-per-user", "15"])
    holders = []
    try:
        for uid, count in (("42401", 15), ("42402", 5)):
            holder = subprocess.Popen(as_uid(uid, [sys.executable, "-c", ROOM_HOLDER, daemon.sock, str(count)]),
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            holders.append(holder)
            checks.check(holder.stdout.readline().strip() == "held %d" % count, "uid %s holds %d connections" % (uid, count))
        # All 20 taken, each uid within its own limit. Root (holding none) still gets in.
        c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        c.connect(daemon.sock)
        c.settimeout(30)
        first = b""
        while b"\n" not in first:
            first += c.recv(4096)
        checks.check(b'"hello"' in first.split(b"\n")[0], "a full daemon still greets another user: %r" % first.split(b"\n")[0][:120])
        # One connection of the biggest holder, uid 42401, is closed with bye displaced; none of 42402's.
        holders[0].stdin.write("10\n")
        holders[0].stdin.flush()
        checks.check(holders[0].stdout.readline().strip() == "displaced 1", "the biggest holder gave up exactly one connection")
        holders[1].stdin.write("0.5\n")
        holders[1].stdin.flush()
        checks.check(holders[1].stdout.readline().strip() == "displaced 0", "the smaller holder gave up none")
        c.close()
    finally:
        for holder in holders:
            holder.kill()
            holder.wait()
        checks.check(daemon.stop() == 0, "daemon exits 0")


# ---- 22. listing one's own sessions, or asking status, as fast as answers come does not stall another uid
LIST_FLOOD = r"""
import json, selectors, socket, sys, time
path, connections, per, op = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
request = (b'{"op":"sessions","limit":500}\n' if op == "sessions" else b'{"op":"status"}\n')
socks = []
for c in range(connections):
    while True:  # past the uid's connect rate the door says rate_limited: pace, as an attacker would
        s = socket.socket(socket.AF_UNIX); s.settimeout(60); s.connect(path)
        r = s.makefile("rb")
        if b'"hello"' in r.readline():
            break
        s.close(); time.sleep(0.05)
    s.sendall(b'{"op":"open","form":"signup"}\n' * per)
    socks.append((s, r))
for s, r in socks:  # every session opened (the opens are answered in order, before this pong)
    s.sendall(b'{"op":"ping","id":"opened"}\n')
    while b'"pong"' not in r.readline():
        pass
print("ready", flush=True)
sys.stdin.readline()  # "go": the victim has its idle figures
selector = selectors.DefaultSelector()
pending = {}
for s, r in socks:
    s.setblocking(False)
    selector.register(s, selectors.EVENT_READ)
    pending[s] = b""
    s.sendall(request)
selector.register(sys.stdin, selectors.EVENT_READ)
answers = refused = largest = 0
started = time.monotonic()
while True:
    for key, _ in selector.select():
        if key.fileobj is sys.stdin:  # told to stop
            print("%d %d %d %.1f" % (answers, refused, largest, time.monotonic() - started), flush=True)
            sys.exit(0)
        s = key.fileobj
        try:
            data = s.recv(1 << 20)
        except BlockingIOError:
            continue
        if not data:
            selector.unregister(s)
            continue
        lines = (pending[s] + data).split(b"\n")
        pending[s] = lines.pop()
        for line in lines:  # each answer (a page, a status, or a refusal) asks again at once
            answers += 1
            refused += b'"rate_limited"' in line
            largest = max(largest, len(line))
            s.send(request)
            if answers == connections:  # every connection has had an answer: the flood runs
                print("flooding", flush=True)
"""


def victim_figures(path, hellos, pings):
    """Another uid's connect-to-hello times, and its ping round trips on one connection."""
    hello = []
    for _ in range(hellos):
        start = time.monotonic()
        s = socket.socket(socket.AF_UNIX); s.settimeout(60); s.connect(path)
        r = s.makefile("rb")
        greeted = b'"hello"' in r.readline()
        hello.append(time.monotonic() - start)
        if not greeted:
            checks.check(False, "the victim is greeted")
        s.close()
    s = socket.socket(socket.AF_UNIX); s.settimeout(60); s.connect(path)
    r = s.makefile("rb"); r.readline()
    rtt = []
    for n in range(pings):
        start = time.monotonic()
        s.sendall(b'{"op":"ping","id":%d}\n' % n)
        while b'"pong"' not in r.readline():
            pass
        rtt.append(time.monotonic() - start)
    s.close()
    return percentiles(hello), percentiles(rtt)


def part_22():
    if not is_root:
        print("SKIP part 22: needs root to run the flood as another user")
        return
    connections = 1024 if long else 64
    hellos, pings = (100, 2000) if long else (40, 400)
    for op in ("sessions", "status"):
        daemon = public_daemon(FAST_HASH)
        flood = None
        try:
            flood = as_nobody(LIST_FLOOD, daemon.sock, str(connections), "16", op)
            checks.check(flood.stdout.readline().strip() == "ready", "the flooder holds %d connections x 16 sessions" % connections)
            # Idle: the flooder holds its sessions and asks nothing yet.
            (ih, ip) = victim_figures(daemon.sock, hellos, pings)
            flood.stdin.write("go\n"); flood.stdin.flush()
            checks.check(flood.stdout.readline().strip() == "flooding", "every flooding connection has had an answer")
            # Measured while the flood runs: every answer is followed by the next request.
            (bh, bp) = victim_figures(daemon.sock, hellos, pings)
            flood.stdin.write("stop\n"); flood.stdin.flush()
            answers, refused, largest, seconds = flood.stdout.readline().split()
            print("  %s flood by %d connections x 16 sessions (%s answers in %s s, %s refused, largest %s bytes):"
                  % (op, connections, answers, seconds, refused, largest))
            print("    victim hello p50 %.2f p99 %.2f max %.2f ms idle, p50 %.2f p99 %.2f max %.2f ms under the flood"
                  % tuple(x * 1000 for x in ih + bh))
            print("    victim ping  p50 %.2f p99 %.2f max %.2f ms idle, p50 %.2f p99 %.2f max %.2f ms under the flood"
                  % tuple(x * 1000 for x in ip + bp))
            checks.check(int(answers) > connections, "the %s flood was answered while the victim measured: %s answers" % (op, answers))
            # A small multiple of the idle figures, plus some milliseconds for a shared 2-core
            # machine running a debug build: the flooder's own process competes for the same
            # cores, and reading and writing its many connections is work no share can skip.
            # Before (a reply built from every uid's sessions under one lock, and a uid's share
            # renewed inside its own requests): hello p50 3,788 ms, ping p50 729 ms.
            checks.check(bh[0] <= 10 * ih[0] + 0.025 and bh[1] <= 10 * ih[1] + 0.1,
                         "another uid's hello stays prompt under a %s flood: p50 %.2f ms (idle %.2f), p99 %.2f ms (idle %.2f)" % (op, bh[0] * 1000, ih[0] * 1000, bh[1] * 1000, ih[1] * 1000))
            checks.check(bp[0] <= 10 * ip[0] + 0.025 and bp[1] <= 10 * ip[1] + 0.1,
                         "another uid's ping stays prompt under a %s flood: p50 %.2f ms (idle %.2f), p99 %.2f ms (idle %.2f)" % (op, bp[0] * 1000, ip[0] * 1000, bp[1] * 1000, ip[1] * 1000))
        finally:
            if flood:
                flood.kill()
                flood.wait()
            checks.check(daemon.stop() == 0, "daemon exits 0")


failures = []
for number, part in [("1", part_1), ("2", part_2), ("3", part_3), ("4", part_4), ("5", part_5), ("6", part_6), ("7", part_7), ("8", part_8), ("9", part_9), ("10", part_10), ("11", part_11), ("12", part_12), ("13", part_13), ("14", part_14), ("15", part_15), ("16", part_16), ("17", part_17), ("18", part_18), ("19", part_19), ("20", part_20), ("21", part_21), ("22", part_22)]:
    if os.environ.get("HOSTILE_PARTS") and number not in os.environ["HOSTILE_PARTS"].split(","):
        continue  # HOSTILE_PARTS=10 runs only part 10
    try:
        part()
    except Exception as error:  # every part runs; each failure is reported
        failures.append("item %s: %s: %s" % (number, type(error).__name__, error))
if failures:
    print("hostile neighbour: %d passed, %d failed" % (checks.passed, len(failures)))
    for failure in failures:
        print("  FAILED " + failure)
    sys.exit(1)
checks.done()
