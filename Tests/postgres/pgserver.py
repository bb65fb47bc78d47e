#!/usr/bin/env python3
"""A throwaway PostgreSQL server for the tests: initdb + pg_ctl in a temporary directory, run
as an unprivileged user (nobody when started as root), password authentication over TCP
(scram-sha-256) and TLS with a self-signed certificate, optionally inside a network
namespace.

    python3 Tests/postgres/pgserver.py run -- COMMAND...

starts a server on 127.0.0.1, runs COMMAND with SIGNUPD_TEST_POSTGRES_URL (and _PASSWORD_FILE,
_CA) set, stops the server and exits with COMMAND's status. Where no server can run (not
installed, initdb refused), COMMAND runs without those variables after a line saying why;
tests that need PostgreSQL then skip with their own message.
"""
import glob
import os
import pwd
import secrets
import signal
import shutil
import socket
import subprocess
import sys
import tempfile

USER = "signupd"


def bindir():
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"), key=lambda p: int(p.split("/")[4]))
    return os.path.dirname(found[-1]) if found else None


class Unavailable(Exception):
    pass


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PostgresServer:
    """One server. `netns`: run it in that network namespace; `listen`: its addresses."""

    def __init__(self, listen="127.0.0.1", netns=None, port=None, host=None, addresses=(), clients=None):
        self.bin = bindir()
        if self.bin is None:
            raise Unavailable("no PostgreSQL server installed (scripts/install-deps.sh installs Debian's postgresql)")
        self.netns = netns
        self.listen = listen
        self.host = host or listen.split(",")[0]
        # Every address clients use, for the certificate's subjectAltName.
        self.addresses = list(addresses) or [self.host]
        # Where clients connect from, besides loopback (a CIDR, for pg_hba.conf).
        self.clients = clients
        self.port = port or free_port()
        self.dir = tempfile.mkdtemp(prefix="signupd-pg-")
        os.chmod(self.dir, 0o755)
        self.data = os.path.join(self.dir, "data")
        self.sockdir = os.path.join(self.dir, "sock")
        self.logfile = os.path.join(self.dir, "sock", "postgres.log")
        self.password = secrets.token_urlsafe(24)
        self.password_file = os.path.join(self.dir, "password")
        with open(os.open(self.password_file, os.O_WRONLY | os.O_CREAT, 0o600), "w") as f:
            f.write(self.password + "\n")
        self.runas = None
        if os.geteuid() == 0:
            self.runas = pwd.getpwnam("nobody")
        self.ca = os.path.join(self.dir, "server.crt")
        self.started = False

    def _as_user(self, argv):
        prefix = []
        if self.netns:
            prefix += ["ip", "netns", "exec", self.netns]
        if self.runas:
            prefix += ["runuser", "-u", self.runas.pw_name, "--"]
        return prefix + argv

    def _own(self, path):
        if self.runas:
            os.chown(path, self.runas.pw_uid, self.runas.pw_gid)

    def init(self):
        os.mkdir(self.sockdir)
        self._own(self.sockdir)
        pwfile = os.path.join(self.dir, "initdb-pw")
        with open(pwfile, "w") as f:
            f.write(self.password + "\n")
        self._own(pwfile)
        os.chmod(pwfile, 0o600)
        os.mkdir(self.data, 0o700)
        self._own(self.data)
        try:
            subprocess.run(self._as_user([
                os.path.join(self.bin, "initdb"), "-D", self.data, "-U", USER, "--pwfile", pwfile,
                "--auth-local=trust", "--auth-host=scram-sha-256", "-E", "UTF8", "--no-locale", "--no-sync"]),
                check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=self.dir)
        except subprocess.CalledProcessError as error:
            raise Unavailable("initdb failed: " + error.stderr.decode(errors="replace").strip()[-500:])
        finally:
            os.unlink(pwfile)
        # TLS: a self-signed certificate for the address the clients use.
        key = os.path.join(self.data, "server.key")
        crt = os.path.join(self.data, "server.crt")
        san = ",".join("IP:%s" % a if a[0].isdigit() else "DNS:%s" % a for a in self.addresses)
        made = subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
                               "-subj", "/CN=%s" % self.host, "-addext", "subjectAltName=%s,DNS:localhost" % san,
                               "-keyout", key, "-out", crt], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        ssl = made.returncode == 0
        if ssl:
            shutil.copy(crt, self.ca)
            for path in (key, crt):
                self._own(path)
                os.chmod(path, 0o600)
        with open(os.path.join(self.data, "postgresql.conf"), "a") as f:
            f.write("listen_addresses = '%s'\nport = %d\nunix_socket_directories = '%s'\n" % (self.listen, self.port, self.sockdir))
            f.write("max_connections = 300\nssl = %s\n" % ("on" if ssl else "off"))
            f.write("fsync = on\nsynchronous_commit = on\n")
        if self.clients:
            with open(os.path.join(self.data, "pg_hba.conf"), "a") as f:
                f.write("host all all %s scram-sha-256\n" % self.clients)
        self.ssl = ssl
        return self

    def start(self):
        result = subprocess.run(self._as_user([os.path.join(self.bin, "pg_ctl"), "-D", self.data, "-l", self.logfile, "-w", "-t", "60", "start"]),
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=self.dir)
        if result.returncode != 0:
            raise Unavailable("pg_ctl start failed: %s %s" % (result.stderr.decode(errors="replace").strip(), self.log()[-1000:]))
        self.started = True
        return self

    def stop(self, mode="fast"):
        if self.started:
            subprocess.run(self._as_user([os.path.join(self.bin, "pg_ctl"), "-D", self.data, "-m", mode, "-w", "stop"]),
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=self.dir)
            self.started = False

    def destroy(self):
        self.stop("immediate")
        shutil.rmtree(self.dir, ignore_errors=True)

    def log(self):
        try:
            with open(self.logfile, errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def psql(self, sql, database="postgres"):
        """Runs SQL as the superuser over the Unix socket; returns its unaligned output."""
        result = subprocess.run(self._as_user([os.path.join(self.bin, "psql"), "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1",
                                               "-h", self.sockdir, "-p", str(self.port), "-U", USER, "-d", database, "-c", sql]),
                                capture_output=True, text=True, cwd=self.dir)
        if result.returncode != 0:
            raise AssertionError("psql failed: %s" % result.stderr)
        return result.stdout.strip()

    def create_database(self, name):
        self.psql('CREATE DATABASE "%s"' % name)
        return name

    def url(self, database="postgres", host=None, sslmode=None):
        sslmode = sslmode or ("require" if self.ssl else "disable")
        return "postgresql://%s@%s:%d/%s?sslmode=%s" % (USER, host or self.host, self.port, database, sslmode)


def main():
    # A SIGTERM (a test runner giving up) still stops and removes the server.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    argv = sys.argv[1:]
    if not argv or argv[0] != "run" or "--" not in argv:
        print(__doc__)
        return 64
    command = argv[argv.index("--") + 1:]
    env = dict(os.environ)
    server = None
    try:
        server = PostgresServer()
        server.init().start()
        env["SIGNUPD_TEST_POSTGRES_URL"] = server.url()
        env["SIGNUPD_TEST_POSTGRES_PASSWORD_FILE"] = server.password_file
        if server.ssl:
            env["SIGNUPD_TEST_POSTGRES_CA"] = server.ca
        print("pgserver: PostgreSQL %s on 127.0.0.1:%d for: %s" % (server.bin.split("/")[4], server.port, " ".join(command)), flush=True)
    except Unavailable as why:
        print("pgserver: SKIP PostgreSQL tests: %s" % why, flush=True)
        if server:
            server.destroy()
            server = None
    try:
        return subprocess.run(command, env=env).returncode
    finally:
        if server:
            server.destroy()


if __name__ == "__main__":
    sys.exit(main())
