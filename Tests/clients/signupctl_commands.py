#!/usr/bin/env python3
"""signupctl's scripted commands end to end against the real daemon, including every
documented exit code (README.md, "Exit codes"; 130 is covered by the tmux test).

usage: signupctl_commands.py path/to/signupd path/to/signupctl
"""
import grp
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

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "robustness"))
from harness import FAST_HASH, Checks, Client, Daemon, as_uid  # noqa: E402

SIGNUPD, CTL = sys.argv[1], sys.argv[2]
checks = Checks("signupctl commands and exit codes")
daemon = Daemon(SIGNUPD, args=FAST_HASH).start()
ENV = {"PATH": "/usr/bin:/bin", "SIGNUPD_SOCKET": daemon.sock}


def ctl(*args, stdin=None, env=ENV):
    return subprocess.run([CTL] + list(args), input=stdin, capture_output=True, text=True, env=env, timeout=60)


def expect(result, code, what):
    checks.check(result.returncode == code, "%s: exit %d, wanted %d; stdout=%r stderr=%r" % (what, result.returncode, code, result.stdout, result.stderr))
    if code != 0:
        lines = result.stderr.strip().splitlines()
        checks.check(len(lines) == 1 and lines[0].startswith("signupctl: "), "%s: a one-line reason on stderr: %r" % (what, result.stderr))


def fake_server(path, behaviour):
    """A socket that is not signupd: it sends garbage, or greets and then says nothing."""
    server = socket.socket(socket.AF_UNIX)
    server.bind(path)
    server.listen(4)

    def serve():
        while True:
            conn, _ = server.accept()
            if behaviour == "garbage":
                conn.sendall(b"HTTP/1.1 200 OK\r\n\r\n")
                conn.close()
            else:
                conn.sendall(b'{"event":"hello","protocol":"signup/1","server":"mute","forms":[],'
                             b'"limits":{"maxLineBytes":65536,"maxSessionsPerConnection":16,"maxOutputBytes":1048576}}\n')
                threading.Timer(30, conn.close).start()

    threading.Thread(target=serve, daemon=True).start()


try:
    # 0: success, for every command.
    r = ctl("signup", "--username", "scripted", "--password-stdin", stdin="pass word\n")
    expect(r, 0, "signup")
    checks.check(r.stdout.strip() == "Signed up: scripted", "signup prints what happened: %r" % r.stdout)
    pwfile = os.path.join(daemon.directory, "pw")
    with open(pwfile, "w") as f:
        f.write("pass word\n")
    r = ctl("login", "--username", "scripted", "--password-file", pwfile)
    expect(r, 0, "login")
    token = r.stdout.strip()
    checks.check(len(token) == 43, "login prints the token alone: %r" % r.stdout)
    r = ctl("verify", "--", token)  # a base64url token may begin with "-"
    expect(r, 0, "verify")
    checks.check(r.stdout.strip() == "scripted", "verify prints the user")
    # The token on standard input keeps it out of /proc/PID/cmdline: no argument, or "-".
    for args in ([], ["-"]):
        r = ctl("verify", *args, stdin=token + "\n")
        expect(r, 0, "verify %s with the token on standard input" % args)
        checks.check(r.stdout.strip() == "scripted", "verify %s reads the token from standard input" % args)
    # logout revokes a token read from standard input; verify then refuses it, and a second
    # logout says it is gone.
    doomed = ctl("login", "--username", "scripted", "--password-file", pwfile).stdout.strip()
    r = ctl("logout", stdin=doomed + "\n")
    expect(r, 0, "logout")
    checks.check(r.stdout.strip() == "logged out", "logout says so: %r" % r.stdout)
    expect(ctl("verify", stdin=doomed + "\n"), 1, "verify after logout")
    expect(ctl("logout", stdin=doomed + "\n"), 1, "logout again")
    r = ctl("logout", "--json", stdin=token + "x\n")
    checks.check(r.returncode == 1 and json.loads(r.stdout)["error"]["code"] == "invalid_token", "logout --json of an unknown token: %r" % r.stdout)
    expect(ctl("verify", stdin=token + "\n"), 0, "the other token still verifies")
    r = ctl("login", "--username", "scripted", "--password-stdin", "--json", stdin="pass word\n")
    expect(r, 0, "login --json")
    out = json.loads(r.stdout)
    checks.check(out["ok"] is True and out["command"] == "login" and out["user"] == "scripted" and len(out["token"]) == 43, "login --json: %s" % out)
    # Another form is still the same command, in success as in failure (helper-28).
    number = "+86 138 %04d %04d" % (os.getpid() % 10000, int(time.time()) % 10000)
    for form, command in (("phone-signup", "signup"), ("phone-login", "login")):
        r = ctl(command, "--form", form, "--username", number, "--password-stdin", "--json", stdin="pass word\n")
        out = json.loads(r.stdout)
        checks.check(r.returncode == 0 and out["ok"] is True and out["command"] == command, "%s --form %s --json: %r" % (command, form, r.stdout))
    r = ctl("describe", "--json")
    expect(r, 0, "describe --json")
    checks.check([f["name"] for f in json.loads(r.stdout)["forms"]] == ["signup", "login", "phone-signup", "phone-login"], "describe --json lists the forms")
    r = ctl("describe")
    checks.check("repeatedPassword" in r.stdout and "(secret)" in r.stdout, "describe shows fields")
    r = ctl("ping", "--json")
    expect(r, 0, "ping --json")
    checks.check(json.loads(r.stdout)["roundTripMicroseconds"] >= 0, "ping --json has a round trip")
    r = ctl("raw", stdin='{"op":"describe","id":1}\n{"op":"ping","id":2}\n')
    expect(r, 0, "raw")
    events = [json.loads(line)["event"] for line in r.stdout.splitlines()]
    checks.check(events == ["hello", "description", "pong"], "raw relays lines both ways: %s" % events)
    # A large input: signupd stops reading a client that does not read its answers, so raw
    # must read while it writes (a blocking write of 20,000 pings hung, found by fresh eyes).
    r = ctl("raw", stdin="".join('{"op":"ping","id":%d}\n' % i for i in range(20000)))
    expect(r, 0, "raw with 20,000 requests")
    pongs = [json.loads(line).get("id") for line in r.stdout.splitlines()[1:]]
    checks.check(pongs == list(range(20000)), "raw relays 20,000 pings and their pongs, in order: %d" % len(pongs))
    r = ctl("--generate-completion-script", "bash")
    checks.check(r.returncode == 0 and "signupctl" in r.stdout, "bash completions are generated")

    # 1: the daemon said no.
    expect(ctl("login", "--username", "scripted", "--password-stdin", stdin="wrong\n"), 1, "wrong password")
    expect(ctl("verify", "A" * 43), 1, "unknown token")

    # 2: invalid input.
    r = ctl("signup", "--username", "scripted", "--password-stdin", stdin="pass word\n")
    expect(r, 2, "taken name")
    checks.check("Username already taken" in r.stderr, "says the name is taken")
    r = ctl("signup", "--username", "short", "--password-stdin", stdin="abc\n")
    expect(r, 2, "short password")
    checks.check("at least 5 characters" in r.stderr, "says why")
    expect(ctl("signup", "--username", "bad name!", "--password-stdin", stdin="pass word\n"), 2, "invalid username")

    # A form the daemon does not offer is a usage error that lists the ones it does; --field
    # names a field of the form (not a secret) as NAME=VALUE; the phone form's identity is
    # its phone field, filled from --username.
    r = ctl("signup", "--form", "nosuch", "--username", "x", "--password-stdin", stdin="pass word\n")
    expect(r, 64, "unknown form")
    checks.check("phone-signup" in r.stderr and "login" in r.stderr, "lists the forms offered: %r" % r.stderr)
    expect(ctl("signup", "--username", "fieldy", "--field", "nosuch=1", "--password-stdin", stdin="pass word\n"), 64, "--field with an unknown field")
    expect(ctl("signup", "--username", "fieldy", "--field", "password=1", "--password-stdin", stdin="pass word\n"), 64, "--field naming a secret")
    expect(ctl("signup", "--username", "fieldy", "--field", "novalue", "--password-stdin", stdin="pass word\n"), 64, "--field without =")
    r = ctl("signup", "--form", "phone-signup", "--username", "+86 138-0000-1111", "--password-stdin", stdin="secret7\n")
    expect(r, 0, "phone signup fills the phone field from --username")

    # 3: unreachable.
    r = ctl("ping", "--socket", os.path.join(daemon.directory, "nothing.sock"))
    expect(r, 3, "no socket")
    checks.check("signupd is not running" in r.stderr, "says signupd is not running: %r" % r.stderr)
    # The daemon refuses a connection over its per-uid limit with an error, not hello:
    # reported as the daemon's refusal, with its code and message, not as "not signupd".
    full = Daemon(SIGNUPD, args=FAST_HASH + ["--max-connections-per-user", "1"]).start()
    try:
        holder = Client(full.sock)  # the uid's one connection
        r = ctl("ping", "--socket", full.sock)
        expect(r, 3, "refused over the per-uid connection limit")
        checks.check("limit_exceeded" in r.stderr and "too many connections for uid" in r.stderr and "hello" not in r.stderr,
                     "names the refusal's code and the daemon's message: %r" % r.stderr)
        holder.close()
    finally:
        full.stop()

    # 4: the conversation broke.
    garbage = os.path.join(daemon.directory, "garbage.sock")
    fake_server(garbage, "garbage")
    expect(ctl("ping", "--socket", garbage), 4, "not signupd")
    mute = os.path.join(daemon.directory, "mute.sock")
    fake_server(mute, "mute")
    r = ctl("describe", "--socket", mute, "--timeout", "1")
    expect(r, 4, "timeout")
    checks.check("did not answer within" in r.stderr, "says it timed out")

    # 64: bad usage.
    checks.check(ctl("signup", "--no-such-option").returncode == 64, "unknown option is exit 64")
    checks.check(ctl("verify", stdin="").returncode == 64, "no token, not even on standard input, is exit 64")

    # monitor: attach to a live session and print its events until it is closed.
    owner = Client(daemon.sock)
    session = owner.open("signup")
    monitor = subprocess.Popen([CTL, "monitor", "--session", session, "--json"], stdout=subprocess.PIPE, text=True, env=ENV)
    first = json.loads(monitor.stdout.readline())
    checks.check(first["ok"] is True and first["event"] == "attached" and first["session"] == session and "id" not in first, "monitor attaches: %s" % first)
    for _ in range(5):
        monitor.stdout.readline()  # the snapshot
    owner.send("set", field="password", value="abc")
    seen = json.loads(monitor.stdout.readline())
    checks.check(seen["event"] == "validation" and seen["field"] == "password" and seen["state"] == "failed", "monitor shows events: %s" % seen)
    owner.send("close")
    last = json.loads(monitor.stdout.readline())
    checks.check(last["event"] == "closed", "monitor sees the end: %s" % last)
    checks.check(monitor.wait(timeout=30) == 0, "monitor exits 0 when the session ends")
    expect(ctl("monitor", "--session", "0000000000000000"), 1, "monitor of an unknown session")
    # A failed login seen by monitor --json: the envelope's ok is signupctl's, the
    # result's own outcome is eventOk.
    owner = Client(daemon.sock)
    session = owner.open("login")
    monitor = subprocess.Popen([CTL, "monitor", "--session", session, "--json"], stdout=subprocess.PIPE, text=True, env=ENV)
    checks.check(json.loads(monitor.stdout.readline())["event"] == "attached", "monitor attaches to a login")
    owner.send("set", field="username", value="nobodyatall")
    owner.send("set", field="password", value="wrong password")
    for _ in range(100):
        owner.barrier()
        request = owner.send("submit")
        # Taken: busy carrying its id; not yet: a not_ready error carrying it.
        answer, _ = owner.until(lambda m: m.get("id") == request and m["event"] in ("busy", "error"))
        if answer["event"] == "busy":
            break
    while True:
        event = json.loads(monitor.stdout.readline())
        if event["event"] == "result":
            break
    checks.check(event["ok"] is True and event["eventOk"] is False and event["message"] == "Invalid username or password",
                 "a failed login reads eventOk false: %s" % event)
    owner.send("close")
    checks.check(monitor.wait(timeout=30) == 0, "monitor ends with the login session")

    # The form session the owner opened is listed by `sessions`, and completion offers its id.
    owner = Client(daemon.sock)
    session = owner.open("login")
    r = ctl("sessions")
    expect(r, 0, "sessions")
    checks.check(r.stdout.splitlines()[0].split() == ["SESSION", "FORM", "AGE", "VIEWS"] and any(l.split()[:2] == [session, "login"] for l in r.stdout.splitlines()),
                 "sessions lists the open session: %r" % r.stdout)
    r = ctl("---completion", "monitor", "--", "--session", "3", "0", CTL, "monitor", "--session", "")
    checks.check(r.returncode == 0 and session in r.stdout.split(), "completion of --session offers live session ids: %r %r" % (r.stdout, r.stderr))
    r = ctl("--generate-completion-script", "bash")
    checks.check("'--socket')\n        __signupctl_add_completions -f" in r.stdout and "'--password-file')\n        __signupctl_add_completions -f" in r.stdout,
                 "bash completes paths for --socket and --password-file")
    # Shared options before the subcommand complete too: `signupctl --socket <Tab>` offers paths.
    script = ctl("--generate-completion-script", "bash").stdout
    probe = ('source /dev/stdin; COMP_WORDS=(signupctl --socket ""); COMP_CWORD=2; COMP_LINE="signupctl --socket "; '
             'COMP_POINT=${#COMP_LINE}; _signupctl signupctl "" --socket; printf "%s\\n" "${COMPREPLY[@]}"')
    r = subprocess.run(["bash", "-c", probe], input=script, capture_output=True, text=True, cwd=daemon.directory, timeout=60)
    offered = r.stdout.split()
    checks.check("signupd.sock" in offered and "ping" not in offered, "bash: --socket before the subcommand completes paths: %r %r" % (offered, r.stderr))
    r = ctl("--generate-completion-script", "zsh")
    checks.check(r.returncode == 0 and "]:path:_files'" in r.stdout and "---completion monitor -- --session" in r.stdout,
                 "zsh completes paths, and session ids through signupctl itself")

    # Error hints that name the cause.
    regular = os.path.join(daemon.directory, "regular-file")
    open(regular, "w").close()
    refused = os.path.join(daemon.directory, "refused.sock")
    dead = socket.socket(socket.AF_UNIX)
    dead.bind(refused)  # bound, never listening: connect is refused
    r = ctl("ping", "--socket", regular)
    expect(r, 3, "a regular file as the socket")
    checks.check("is a regular file, not a socket" in r.stderr, "says it is not a socket: %r" % r.stderr)
    r = ctl("ping", "--socket", refused)
    expect(r, 3, "nobody listening")
    checks.check("nothing listens on" in r.stderr, "says nothing listens: %r" % r.stderr)
    r = ctl("ping", "--socket", os.path.join(daemon.directory, "nothing.sock"))
    checks.check("signupd is not running" in r.stderr, "says signupd is not running: %r" % r.stderr)
    if os.geteuid() == 0:
        os.chmod(daemon.directory, 0o711)
        os.chown(daemon.sock, 0, 0)
        os.chmod(daemon.sock, 0o660)
        r = subprocess.run(as_uid(65534, [CTL, "ping", "--socket", daemon.sock]),
                           capture_output=True, text=True, timeout=60)
        expect(r, 3, "permission denied")
        checks.check("permission denied" in r.stderr and "group root" in r.stderr and "usermod" not in r.stderr
                     and "ask the administrator" in r.stderr and "connect as root" in r.stderr,
                     "root's group: never advises joining it: %r" % r.stderr)
        # A socket of an ordinary group: joining that group is the advice.
        os.chown(daemon.sock, 0, 100)
        r = subprocess.run(as_uid(65534, [CTL, "ping", "--socket", daemon.sock]),
                           capture_output=True, text=True, timeout=60)
        group = grp.getgrgid(100).gr_name
        checks.check(r.returncode == 3 and ("usermod -aG %s $USER" % group) in r.stderr,
                     "an ordinary group: how to join it: %r" % r.stderr)
        # A directory without a group search bit: joining a group cannot help.
        os.chmod(daemon.directory, 0o700)
        r = subprocess.run(as_uid(65534, [CTL, "ping", "--socket", daemon.sock]),
                           capture_output=True, text=True, timeout=60)
        checks.check(r.returncode == 3 and "private to its owner" in r.stderr and "join" not in r.stderr,
                     "a private directory says so: %r" % r.stderr)
        os.chmod(daemon.directory, 0o711)
        os.chown(daemon.sock, 0, 0)

    # Shared options before the subcommand, as with systemctl --user / swaymsg -s.
    r = subprocess.run([CTL, "--socket", daemon.sock, "--timeout", "5", "ping"], capture_output=True, text=True, env={"PATH": "/usr/bin:/bin"}, timeout=60)
    expect(r, 0, "--socket before the subcommand")
    r = subprocess.run([CTL, "--json", "--socket=" + daemon.sock, "describe"], capture_output=True, text=True, env={"PATH": "/usr/bin:/bin"}, timeout=60)
    expect(r, 0, "--json --socket= before the subcommand")
    checks.check(json.loads(r.stdout)["command"] == "describe", "options before the subcommand apply to it")

    # Every usage error exits 64, with a reason; a mistyped command gets a suggestion.
    pwfile_missing = os.path.join(daemon.directory, "no-such-file")
    usage = [
        (["pnig"], "did you mean 'ping'"),
        (["--socket", daemon.sock, "sesions"], "did you mean 'sessions'"),
        (["signup", "--no-such-option"], "Unknown option"),
        (["monitor"], "Missing expected argument"),
        (["ping", "--timeout", "-1"], "must be a positive number"),
        (["ping", "--timeout", "soon"], "soon"),
        (["ping", "--socket"], "Missing value"),
        (["--socket"], "Missing value for '--socket <path>'"),
        (["help", "pnig"], "did you mean 'ping'"),
        (["login", "--password-stdin"], "--username is required"),
        (["login", "--username", "x", "--password-file", pwfile_missing], "cannot read --password-file"),
        (["signup", "--username", "x", "--password-stdin", "--password-file", pwfile], "either --password-stdin or --password-file"),
    ]
    for args, reason in usage:
        r = ctl(*args, stdin="pw\n")
        checks.check(r.returncode == 64 and reason in r.stderr, "%s: exit 64 with %r; got %d %r" % (args, reason, r.returncode, r.stderr))
        r = ctl(*(args + ["--json"] if args[-1] != "--socket" else ["--json"] + args), stdin="pw\n")
        out = [json.loads(line) for line in r.stdout.splitlines()]
        checks.check(r.returncode == 64 and len(out) == 1 and out[0]["ok"] is False and out[0]["error"]["code"] in ("usage", "unknown_command")
                     and out[0]["error"]["exitCode"] == 64, "%s --json: one usage envelope on stdout: %r" % (args, r.stdout))
    # --password-stdin with an empty standard input (</dev/null) is a usage error, not an empty password.
    for command in ("signup", "login"):
        r = ctl(command, "--username", "x", "--password-stdin", stdin="")
        checks.check(r.returncode == 64 and "no password on standard input" in r.stderr, "%s --password-stdin </dev/null: %d %r" % (command, r.returncode, r.stderr))
    # --version and help print text, or one envelope under --json.
    for args, key, text in [(["--version", "--json"], "version", "0."), (["help", "--json"], "help", "SUBCOMMANDS"),
                            (["help", "ping", "--json"], "help", "signupctl ping")]:
        r = ctl(*args)
        out = [json.loads(line) for line in r.stdout.splitlines()]
        checks.check(r.returncode == 0 and len(out) == 1 and out[0]["ok"] is True and text in out[0][key],
                     "%s: one envelope with %s: %d %r" % (args, key, r.returncode, r.stdout[:200]))
    r = ctl("--help")
    checks.check(r.returncode == 0 and "130" in r.stdout and "JSON OUTPUT" in r.stdout, "--help lists exit code 130 and the JSON envelope")

    # Every subcommand x --json x success/failure: the same envelope, on stdout, no protocol ids,
    # and the same exit code with and without --json.
    owner2 = Client(daemon.sock)
    live = owner2.open("signup")
    no_daemon = os.path.join(daemon.directory, "nothing.sock")

    table = [
        # (name, args, stdin, expected exit, expected error code or None, members a success has)
        ("signup ok", ["signup", "--username", "tabled", "--password-stdin"], "pass word\n", 0, None, ["message", "user", "session"]),
        ("signup taken", ["signup", "--username", "tabled", "--password-stdin"], "pass word\n", 2, "invalid_input", []),
        ("login ok", ["login", "--username", "tabled", "--password-stdin"], "pass word\n", 0, None, ["message", "user", "token", "session"]),
        ("login wrong", ["login", "--username", "tabled", "--password-stdin"], "wrong pass\n", 1, "refused", []),
        ("describe ok", ["describe"], None, 0, None, ["server", "protocol", "socket", "forms"]),
        ("describe no daemon", ["describe", "--socket", no_daemon], None, 3, "no_daemon", []),
        ("ping ok", ["ping"], None, 0, None, ["server", "socket", "connectMicroseconds", "roundTripMicroseconds"]),
        ("ping not a socket", ["ping", "--socket", regular], None, 3, "not_a_socket", []),
        ("verify ok", ["verify", "--", token], None, 0, None, ["user"]),
        ("verify invalid", ["verify", "A" * 43], None, 1, "invalid_token", []),
        ("sessions ok", ["sessions"], None, 0, None, ["sessions"]),
        ("sessions refused", ["sessions", "--socket", refused], None, 3, "connection_refused", []),
        ("monitor unknown", ["monitor", "--session", "0000000000000000"], None, 1, "unknown_session", []),
        ("monitor timeout", ["monitor", "--session", "x", "--socket", mute, "--timeout", "1"], None, 4, "timeout", []),
        ("raw no daemon", ["raw", "--socket", no_daemon], "", 3, "no_daemon", []),
    ]
    for name, args, stdin, code, error, members in table:
        plain = ctl(*args, stdin=stdin)
        if name.startswith("signup ok"):
            # The account now exists: the --json run needs a fresh name.
            args = [a if a != "tabled" else "tabled2" for a in args]
        as_json = ctl(*(args[:1] + ["--json"] + args[1:]), stdin=stdin)
        checks.check(plain.returncode == code and as_json.returncode == code,
                     "%s: exit %d and %d, wanted %d: %r %r" % (name, plain.returncode, as_json.returncode, code, plain.stderr, as_json.stderr))
        lines = as_json.stdout.splitlines()
        checks.check(len(lines) == 1, "%s --json: exactly one line on stdout: %r" % (name, as_json.stdout))
        envelope = json.loads(lines[0])
        checks.check(envelope["command"] == args[0] and "id" not in envelope, "%s --json: names its command, no protocol id: %s" % (name, envelope))
        if error is None:
            checks.check(envelope["ok"] is True and all(m in envelope for m in members), "%s --json: ok with %s: %s" % (name, members, envelope))
            checks.check(plain.stdout.strip() != "", "%s: prints something without --json" % name)
        else:
            checks.check(envelope["ok"] is False and envelope["error"]["code"] == error and envelope["error"]["exitCode"] == code
                         and envelope["error"]["message"], "%s --json: error %s: %s" % (name, error, envelope))
            checks.check("pass word" not in as_json.stdout + as_json.stderr, "%s: the password appears nowhere" % name)
    listed = json.loads(ctl("sessions", "--json").stdout)["sessions"]
    checks.check(any(s["session"] == live and s["form"] == "signup" and s["views"] == 0 for s in listed), "sessions --json lists the live session: %s" % listed)
    # monitor --json: one envelope per event, until the session closes.
    monitor = subprocess.Popen([CTL, "monitor", "--json", "--session", live], stdout=subprocess.PIPE, text=True, env=ENV)
    first = json.loads(monitor.stdout.readline())
    owner2.send("close")
    rest = [json.loads(line) for line in monitor.stdout]
    checks.check(monitor.wait(timeout=30) == 0, "monitor exits 0 when the session closes")
    events = [first] + rest
    checks.check(all(e["ok"] is True and e["command"] == "monitor" and "id" not in e for e in events) and events[-1]["event"] == "closed",
                 "monitor --json: every event an envelope without ids: %s" % events)

    # Under LANG=zh_CN.UTF-8 every scripted error is Chinese: no English word is left once the
    # program's name, paths, option names, commands to type (in backquotes), group names and
    # what the user typed are set aside. (--help stays English, as systemctl's does; errors
    # about the command line's own syntax come from the argument parser, in English.)
    zh = dict(ENV, LANG="zh_CN.UTF-8")
    scripted_errors = [
        (("ping",), None, dict(zh, SIGNUPD_SOCKET=os.path.join(daemon.directory, "none.sock")), 3, "注册服务未运行"),
        (("ping", "--socket", daemon.directory), None, zh, 3, "不是套接字"),
        (("ping", "--socket", mute, "--timeout", "1"), None, zh, 4, "秒内没有应答"),
        (("signup", "--username", "scripted", "--password-stdin"), "pass word\n", zh, 2, "用户名已存在"),
        (("login", "--username", "scripted", "--password-stdin"), "wrong word\n", zh, 1, "用户名或密码错误"),
        (("pnig",), None, zh, 64, "未知命令"),
        (("login", "--form", "signup", "--username", "someone", "--password-stdin"), "pass word\n", zh, 64, "用于注册"),
        (("verify",), "not-a-token\n", zh, 1, "令牌无效"),
        (("verify",), "\n", zh, 64, "标准输入中没有令牌"),
        (("signup", "--username", "someone", "--password-stdin"), "", zh, 64, "标准输入中没有密码"),
        (("signup", "--username", "someone", "--field", "nickname=x", "--password-stdin"), "pass word\n", zh, 64, "没有这个字段"),
        (("signup", "--form", "no-such-form", "--username", "someone", "--password-stdin"), "pass word\n", zh, 64, "没有 no-such-form 表单"),
    ]
    for args, stdin, env, code, chinese in scripted_errors:
        r = ctl(*args, stdin=stdin, env=env)
        expect(r, code, "zh_CN: %s" % " ".join(args))
        text = r.stderr
        for typed in ["signupctl", "SIGNUPD_SOCKET", "signupd-clients"] + [part for a in args if not a.startswith("-") for part in a.split("=")]:
            text = text.replace(typed, "")
        text = re.sub(r"`[^`]*`|\S*/\S*|--[a-z-]+", "", text)
        english = re.findall(r"[A-Za-z]{2,}", text)
        checks.check(chinese in r.stderr and not english, "zh_CN: %s says %r in Chinese, no English words %s: %r" % (" ".join(args), chinese, english, r.stderr))
    # And what the commands print when they work.
    for args in (("ping",), ("describe",), ("sessions",)):
        r = ctl(*args, env=zh)
        text = re.sub(r"\S*/\S*|\b[0-9a-f]{16}\b", "", r.stdout)  # paths, session ids
        for name in ("signupd-clients", "repeatedPassword", "username", "password", "phone", "signup", "login"):
            text = text.replace(name, "")  # field and form names are typed as they are
        english = re.findall(r"[A-Za-z]{2,}", text)
        checks.check(r.returncode == 0 and not english, "zh_CN: %s prints no English words %s: %r" % (args[0], english, r.stdout))
    # In another language than English, a label keeps its capital mid-sentence (a German
    # label is a noun; helper-49 saw "benutzername — …"); English lower-cases it.
    german = tempfile.mkdtemp(prefix="signupd-de-")
    try:
        with open(os.path.join(german, "de.messages"), "w") as f:
            f.write("username.taken = Benutzername bereits vergeben\n")
        de_daemon = Daemon(SIGNUPD, args=FAST_HASH + ["--messages-dir", german]).start()
        try:
            de_env = dict(ENV, SIGNUPD_SOCKET=de_daemon.sock)
            expect(ctl("signup", "--username", "taken", "--password-stdin", stdin="pass word\n", env=de_env), 0, "a first signup")
            r = ctl("signup", "--username", "taken", "--password-stdin", stdin="pass word\n", env=dict(de_env, LANG="de_DE.UTF-8"))
            checks.check(r.returncode == 2 and "Username — Benutzername bereits vergeben" in r.stderr, "de_DE: the label keeps its capital: %r" % r.stderr)
            r = ctl("signup", "--username", "taken", "--password-stdin", stdin="pass word\n", env=dict(de_env, LANG="en_GB.UTF-8"))
            checks.check(r.returncode == 2 and "username — Username already taken" in r.stderr, "en_GB: lower case mid-sentence: %r" % r.stderr)
        finally:
            checks.check(de_daemon.stop() == 0, "the German daemon exits 0")
    finally:
        shutil.rmtree(german, ignore_errors=True)
finally:
    checks.check(daemon.stop() == 0, "daemon exits 0")
checks.done()
