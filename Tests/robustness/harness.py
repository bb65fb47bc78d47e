"""Shared pieces of the robustness checks: start signupd as a separate process (ready
when it says READY=1 over NOTIFY_SOCKET), and a small protocol client."""
import atexit
import http.server
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

FAST_HASH = ["--argon2-ops", "1", "--argon2-memory-kib", "8"]

# What another uid runs must be reachable by that uid wherever the project was cloned: a
# checkout under /root (0700) or in a private directory is not. Python comes from Debian's
# /usr/bin/python3 (scripts/install-deps.sh installs it; the interpreter running the tests
# may live under /root, as pyenv's does); anything else is copied once into a directory made
# for the purpose, readable by all and removed when the check ends.
OTHERS_PYTHON = "/usr/bin/python3" if os.access("/usr/bin/python3", os.X_OK) else None
_reachable_dir = None


def reachable(path):
    """A copy of the executable at `path` that every uid can run."""
    global _reachable_dir
    if os.path.realpath(path) == os.path.realpath(sys.executable) or os.path.basename(path).startswith("python"):
        if OTHERS_PYTHON is None:
            raise RuntimeError("/usr/bin/python3 is missing: scripts/install-deps.sh installs it")
        return OTHERS_PYTHON
    if _reachable_dir is None:
        _reachable_dir = tempfile.mkdtemp(prefix="signupd-reachable-")
        os.chmod(_reachable_dir, 0o755)
        atexit.register(shutil.rmtree, _reachable_dir, ignore_errors=True)
    copy = os.path.join(_reachable_dir, os.path.basename(path))
    if not os.path.exists(copy):
        shutil.copy2(path, copy)
        os.chmod(copy, 0o755)
    # signupd opens the phone-number library beside itself (libsignupd-phone.so).
    library = os.path.join(os.path.dirname(path), "libsignupd-phone.so")
    if os.path.exists(library) and not os.path.exists(os.path.join(_reachable_dir, "libsignupd-phone.so")):
        shutil.copy2(library, _reachable_dir)
    return copy


def as_uid(uid, argv):
    """`argv` as uid (and gid) `uid` with no supplementary groups, through setpriv, its
    program a copy that uid can reach (`reachable`)."""
    return ["setpriv", "--reuid=%s" % uid, "--regid=%s" % uid, "--clear-groups", reachable(argv[0])] + list(argv[1:])

SLOW_HASH = ["--argon2-ops", "4", "--argon2-memory-kib", "262144"]


class Daemon:
    """signupd as a separate process, ready when it says READY=1. A subclass changes how it
    is run (`command`, `env_path`) and what a failure calls it (`label`)."""

    label = "signupd"
    env_path = "/usr/bin:/bin"

    def __init__(self, binary, directory=None, database=None, args=(), socket_name="signupd.sock", log_name="signupd.log"):
        self.binary = binary
        if directory is None:
            # Its socket, database and log go when the check ends (not before: a check may
            # start the next daemon in the same directory).
            directory = tempfile.mkdtemp(prefix="signupd-rb-")
            atexit.register(shutil.rmtree, directory, ignore_errors=True)
        self.directory = directory
        self.sock = os.path.join(self.directory, socket_name)
        self.database = database or os.path.join(self.directory, "accounts.sqlite")
        self.args = list(args)
        self.log_path = os.path.join(self.directory, log_name)
        self.proc = None

    def command(self):
        return [self.binary, "--socket", self.sock, "--database", self.database] + self.args

    def start(self, timeout=60):
        """Starts it and waits for READY=1; fails at once, with its log, if it exits first."""
        notify_path = os.path.join(self.directory, "notify-%x-%d.sock" % (id(self), time.monotonic_ns()))
        notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        notify.bind(notify_path)
        notify.settimeout(0.5)
        self.proc = subprocess.Popen(
            self.command(), env={"NOTIFY_SOCKET": notify_path, "PATH": self.env_path},
            stdout=subprocess.DEVNULL, stderr=open(self.log_path, "a"))
        deadline = time.monotonic() + timeout
        try:
            while True:
                try:
                    if b"READY=1" in notify.recv(4096):
                        break
                except socket.timeout:
                    if self.proc.poll() is not None or time.monotonic() > deadline:
                        raise AssertionError("%s did not become ready; log:\n%s" % (self.label, self.log()))
        finally:
            notify.close()
            os.unlink(notify_path)
        return self

    def log(self):
        with open(self.log_path, errors="replace") as f:
            return f.read()

    def signal(self, sig):
        self.proc.send_signal(sig)

    def wait(self, timeout=60):
        return self.proc.wait(timeout=timeout)

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            return self.proc.wait(timeout=60)
        return self.proc.returncode if self.proc else None

    def fd_count(self):
        return len(os.listdir("/proc/%d/fd" % self.proc.pid))

    def lasting_fds(self):
        """The daemon's descriptors minus datagram sockets, as {fd: target}. sd_notify opens a
        datagram socket for the instant of each STATUS= call (once a second) and journald's is
        opened on first use, so neither says anything about connections leaking."""
        datagram = set()
        with open("/proc/%d/net/unix" % self.proc.pid) as f:
            next(f)
            for line in f:
                fields = line.split()
                if fields[4] == "0002":
                    datagram.add("socket:[%s]" % fields[6])
        directory = "/proc/%d/fd" % self.proc.pid
        lasting = {}
        for fd in os.listdir(directory):
            try:
                target = os.readlink(os.path.join(directory, fd))
            except OSError:
                continue  # closed while we looked
            if target not in datagram:
                lasting[int(fd)] = target
        return lasting

    def socket_count(self):
        """Open sockets (client connections, the listener, internal ones)."""
        directory = "/proc/%d/fd" % self.proc.pid
        count = 0
        for fd in os.listdir(directory):
            try:
                count += os.readlink(os.path.join(directory, fd)).startswith("socket:")
            except OSError:
                pass  # closed while we looked
        return count

    def rss_kib(self):
        with open("/proc/%d/status" % self.proc.pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])


class Client:
    def __init__(self, path, timeout=30):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        self.sock.connect(path)
        self.reader = self.sock.makefile("rb")
        self.hello = self.read()
        self.next_id = 0

    def close(self):
        self.reader.close()
        self.sock.close()

    def read(self):
        line = self.reader.readline()
        if not line:
            raise EOFError("connection closed")
        return json.loads(line)

    def send_raw(self, data):
        self.sock.sendall(data)

    def send(self, op, **members):
        self.next_id += 1
        members["id"] = members.get("id", self.next_id)
        self.sock.sendall(json.dumps(dict(op=op, **members)).encode() + b"\n")
        return members["id"]

    def until(self, predicate):
        seen = []
        while True:
            m = self.read()
            if predicate(m):
                return m, seen
            seen.append(m)

    def reply(self, request_id):
        return self.until(lambda m: m.get("id") == request_id and m["event"] not in ("validation", "enabled", "busy"))

    def barrier(self):
        return self.reply(self.send("ping"))[1]

    def open(self, form):
        opened, _ = self.reply(self.send("open", form=form))
        if opened.get("event") != "opened":
            # Refused (rate_limited, limit_exceeded…): no snapshot follows to wait for.
            raise RuntimeError("open %s refused: %s" % (form, opened))
        self.until(lambda m: m.get("event") == "busy")
        return opened["session"]

    def fill_signup(self, name, password):
        """Opens a signup and fills it; returns the username's availability validation."""
        self.open("signup")
        self.send("set", field="username", value=name)
        state, _ = self.until(lambda m: m.get("event") == "validation" and m["field"] == "username" and m["state"] in ("ok", "failed"))
        self.send("set", field="password", value=password)
        self.send("set", field="repeatedPassword", value=password)
        self.barrier()
        return state

    def race_signup(self, name, password, barrier=None, timeout=None):
        """Fills a signup, waits at `barrier` (if any) with the other racers, then submits if
        the name looked free: ("ok", name), or ("refused", the message that said why not)."""
        state = self.fill_signup(name, password)
        if barrier:
            barrier.wait(timeout=timeout)
        if state["state"] != "ok":
            return "refused", state["message"]
        result = self.submit_and_wait()
        return ("ok", name) if result.get("ok") else ("refused", result.get("message"))

    def submit_and_wait(self):
        self.send("submit")
        result, _ = self.until(lambda m: m.get("event") in ("result", "error"))
        return result


def race_signups(clients, names, password, timeout=None):
    """Client i signs up names[i % len(names)] with password(i), all submitting together;
    each client is closed after. Returns their `race_signup` outcomes, in the order they came."""
    outcomes = []
    lock = threading.Lock()
    barrier = threading.Barrier(len(clients))

    def racer(index):
        outcome = clients[index].race_signup(names[index % len(names)], password(index), barrier, timeout)
        clients[index].close()
        with lock:
            outcomes.append(outcome)

    threads = [threading.Thread(target=racer, args=(i,)) for i in range(len(clients))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return outcomes


class QuietHandler(http.server.BaseHTTPRequestHandler):
    """An HTTP handler that keeps its request log off the test's output."""

    def log_message(self, *args):
        pass


def serve_http(handler):
    """A threaded HTTP service on a free 127.0.0.1 port, served until the test exits."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


class Checks:
    """Counts checks and prints the plain closing line the CI reads."""

    def __init__(self, name):
        self.name = name
        self.passed = 0

    def check(self, condition, what):
        if not condition:
            raise AssertionError(what)
        self.passed += 1

    def done(self):
        print("%s: %d passed, 0 failed" % (self.name, self.passed))
