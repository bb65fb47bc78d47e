#!/usr/bin/env python3
"""Forms as data and messages by id, tested as people use them: the real daemon as a
separate process, over its socket, with the shipped operator examples.

  1. `signupd --check-config` on the shipped examples (OK) and on a table of broken
     form and message files: exit 1, each problem at its file:line:column.
  2. RxLoginTest's phone forms in zh-CN: a phone of 10 digits is "号码长度不足", 11 is
     ok, a password of 5 is "密码长度不足", login is enabled only when both are ok; a
     phone signup, then a login whose token `verify` accepts.
  3. A live locale switch re-renders every message of the session with the same ids.
  4. The operator's e-mail signup (examples/forms.d/email-signup.form) through the
     unchanged third-party client class, driven only by `describe`; its opt-in
     password-quality rule (libpwquality) and not-containing rule.
  5. The same form in signupctl's interactive form (tmux), labels in zh-CN from LANG.
  6. SIGHUP: a changed form applies to new sessions, an open one keeps its own; a broken
     file is refused and the running forms stay; RELOADING=1 / MONOTONIC_USEC / READY=1.
  7. A start into that broken forms.d (an idle exit, a restart) serves the last
     configuration that loaded, kept 0600 beside the database, and says so in the log,
     systemd's status and `status`; a reload of the fixed files ends it. With no last good
     configuration, or a damaged one, the start fails and says why.

usage: forms_and_locales_test.py path/to/signupd path/to/signupctl
"""
import atexit
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from third_party_client import Client  # noqa: E402  (the unchanged third-party client)

SIGNUPD, SIGNUPCTL = sys.argv[1], sys.argv[2]
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLES = os.path.join(ROOT, "examples")
passed = 0


def check(condition, what):
    global passed
    assert condition, what
    passed += 1


GOOD_FIELD = "[field password]\nkind = secret\nlabel = Password\nrule = max-bytes 4096\n"
HEAD = "[form]\nname = broken\naction = login\nidentity = user\nsecret = password\nsubmit = Go\n"
USER = "[field user]\nkind = username\nlabel = User\nrule = username\n"

# (what, file name, text, expected "line:column: message" fragment)
BROKEN = [
    ("syntax error", "a.form", HEAD + "this is not an assignment\n" + USER + GOOD_FIELD, "a.form:7:1: expected \"key = value\""),
    ("unknown rule", "a.form", HEAD + USER + "rule = shiny\n" + GOOD_FIELD, "a.form:11:8: unknown rule \"shiny\""),
    ("unknown field in equals", "a.form", HEAD + USER + GOOD_FIELD + "[field again]\nkind = secret\nlabel = Again\nrule = equals pasword\n",
     "a.form:18:15: unknown field \"pasword\""),
    ("duplicate field", "a.form", HEAD + USER + GOOD_FIELD + USER, "a.form:15:8: duplicate field \"user\" (first defined on line 7)"),
    ("missing identity", "a.form", HEAD.replace("identity = user\n", "") + USER + GOOD_FIELD, "a.form:1:1: [form] needs \"identity = ...\""),
    ("identity of the wrong kind", "a.form", HEAD.replace("identity = user", "identity = password") + USER + GOOD_FIELD,
     "a.form:4:12: the identity field \"password\" must be of kind username, phone or email"),
    ("unknown key", "a.form", HEAD + "colour = blue\n" + USER + GOOD_FIELD, "a.form:7:1: unknown key \"colour\" in [form]"),
    ("bad number", "a.form", HEAD + USER + "rule = max-length lots\n" + GOOD_FIELD, "a.form:11:19: \"lots\" must be a whole number"),
    ("unknown kind", "a.form", HEAD + USER.replace("kind = username", "kind = colour") + GOOD_FIELD, "a.form:8:8: unknown kind \"colour\""),
    ("unbounded secret", "a.form", HEAD + USER + GOOD_FIELD.replace("rule = max-bytes 4096\n", ""),
     "a.form:5:10: the secret field \"password\" needs \"rule = max-bytes N\""),
    ("unknown message id", "a.form", HEAD + USER + GOOD_FIELD + "ok = password.splendid\n", "a.form:15:6: unknown message id \"password.splendid\""),
    ("available on a login", "a.form", HEAD + USER + "rule = available\n" + GOOD_FIELD, "a.form:11:8: a login form does not check availability"),
    ("label locale not a tag", "a.form", HEAD + USER + "label.zh CN = 用户\n" + GOOD_FIELD, "a.form:11:7: \"zh CN\" is not a BCP 47 language tag"),
    ("two files, one name", "b.form", HEAD + USER + GOOD_FIELD, "b.form:2:8: form \"broken\" is also defined in"),
    ("message file with a section", "fr.messages", "[messages]\n", "fr.messages:1:2: a message file has no sections"),
    ("message set twice", "fr.messages", "login.done = Connecté\nlogin.done = Connectée\n", "fr.messages:2:1: \"login.done\" set twice (first on line 1)"),
]


def check_config():
    ok = subprocess.run([SIGNUPD, "--check-config", "--forms-dir", os.path.join(EXAMPLES, "forms.d"),
                         "--messages-dir", os.path.join(EXAMPLES, "messages.d")], capture_output=True, text=True)
    check(ok.returncode == 0 and "email-signup" in ok.stdout and "fr" in ok.stdout, "the shipped examples check OK: %r %r" % (ok.stdout, ok.stderr))
    for what, name, text, expected in BROKEN:
        directory = tempfile.mkdtemp(prefix="signupd-check-")
        forms, messages = os.path.join(directory, "forms.d"), os.path.join(directory, "messages.d")
        os.mkdir(forms)
        os.mkdir(messages)
        if name == "b.form":  # the same form name in two files
            with open(os.path.join(forms, "a.form"), "w") as f:
                f.write(text)
        with open(os.path.join(messages if name.endswith(".messages") else forms, name), "w") as f:
            f.write(text)
        run = subprocess.run([SIGNUPD, "--check-config", "--forms-dir", forms, "--messages-dir", messages], capture_output=True, text=True)
        location = os.path.join(messages if name.endswith(".messages") else forms, "")
        check(run.returncode == 1, "%s: exit 1, got %d" % (what, run.returncode))
        check(location + expected in run.stderr, "%s: %r not in stderr:\n%s" % (what, location + expected, run.stderr))
        check(run.stdout == "", "%s: nothing on stdout" % what)
        shutil.rmtree(directory)
    # The daemon itself refuses to start on the same errors, saying where.
    directory = tempfile.mkdtemp(prefix="signupd-refuse-")
    os.mkdir(os.path.join(directory, "forms.d"))
    with open(os.path.join(directory, "forms.d", "x.form"), "w") as f:
        f.write(BROKEN[1][2])
    start = subprocess.run([SIGNUPD, "--socket", os.path.join(directory, "s.sock"), "--database", ":memory:",
                            "--forms-dir", os.path.join(directory, "forms.d")], capture_output=True, text=True, timeout=30)
    check(start.returncode == 1 and "x.form:11:8: unknown rule \"shiny\"" in start.stderr and "--check-config" in start.stderr,
          "the daemon refuses to start with the location: %d %r" % (start.returncode, start.stderr))
    check(not os.path.exists(os.path.join(directory, "s.sock")), "and never binds its socket")
    shutil.rmtree(directory)
    missing = subprocess.run([SIGNUPD, "--check-config", "--forms-dir", "/nonexistent/forms.d"], capture_output=True, text=True)
    check(missing.returncode == 1 and "/nonexistent/forms.d: cannot read the directory" in missing.stderr, "a missing --forms-dir: %r" % missing.stderr)


def start_daemon(directory, forms, messages):
    notify_path = os.path.join(directory, "notify.sock")
    notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    notify.bind(notify_path)
    notify.settimeout(30)
    path = os.path.join(directory, "signupd.sock")
    daemon = subprocess.Popen(
        [SIGNUPD, "--socket", path, "--database", os.path.join(directory, "accounts.sqlite"),
         "--forms-dir", forms, "--messages-dir", messages, "--argon2-ops", "1", "--argon2-memory-kib", "8"],
        env={"NOTIFY_SOCKET": notify_path, "PATH": "/usr/bin:/bin"}, stderr=open(os.path.join(directory, "log"), "w"))
    while b"READY=1" not in notify.recv(4096):
        pass
    return daemon, path, notify


def settled(c, field, seen):
    """The password-quality check answers after the barrier: read on until the field's
    latest state is no longer `validating`."""
    states = [m for m in seen if m.get("event") == "validation" and m["field"] == field]
    if states and states[-1]["state"] == "validating":
        final, more = c.until(lambda m: m.get("event") == "validation" and m["field"] == field and m["state"] != "validating")
        seen = seen + more + [final]
    return seen


def field_messages(messages, field):
    return [(m["state"], m["messageId"], m["message"]) for m in messages if m.get("event") == "validation" and m["field"] == field]


def phone_forms(path):
    c = Client(path)
    check("phone-login" in c.hello["forms"] and "phone-signup" in c.hello["forms"], "hello lists the phone forms: %s" % c.hello["forms"])
    described, _ = c.reply(c.send("describe", locale="zh-CN"))
    forms = {f["name"]: f for f in described["forms"]}
    check(described["locale"] == "zh-CN" and forms["phone-login"]["fields"][0]["label"] == "手机号码" and forms["phone-login"]["submitLabel"] == "登录",
          "describe in zh-CN: %s" % forms["phone-login"])
    check(forms["phone-login"]["fields"][0]["rules"]["minDigits"] == 11 and forms["phone-login"]["fields"][0]["kind"] == "phone", "the phone rule is described")

    # Sign up a phone number first (phone-signup), in English.
    opened, _ = c.reply(c.send("open", form="phone-signup"))
    check(opened["locale"] == "en", "a session without a locale is English")
    c.send("set", field="phone", value="+86 138-0013-8000")
    c.send("set", field="password", value="secret6")
    c.until(lambda m: m.get("event") == "enabled" and m["value"])
    c.send("submit")
    result, _ = c.until(lambda m: m.get("event") == "result")
    check(result["ok"] and result["user"] == "tel:+8613800138000" and result["messageId"] == "signup.done", "phone signup: %s" % result)
    c.reply(c.send("close"))
    # The same number written another way is the same identity: taken.
    c.reply(c.send("open", form="phone-signup", locale="zh-CN"))
    c.send("set", field="phone", value="8613800138000")
    taken, _ = c.until(lambda m: m.get("event") == "validation" and m["field"] == "phone" and m["state"] == "failed")
    check(taken["messageId"] == "phone.taken" and taken["message"] == "号码已注册", "one number written two ways is one identity: %s" % taken)
    c.reply(c.send("close"))

    # RxLoginTest: phone-login in zh-CN.
    opened, _ = c.reply(c.send("open", form="phone-login", locale="zh-CN"))
    check(opened["locale"] == "zh-CN", "opened in zh-CN")
    c.send("set", field="phone", value="1380013800")  # 10 digits
    c.send("set", field="password", value="12345")
    seen = c.barrier()
    check(("failed", "phone.too_short", "号码长度不足") in field_messages(seen, "phone"), "10 digits: 号码长度不足: %s" % seen)
    check(("failed", "password.short", "密码长度不足") in field_messages(seen, "password"), "5 characters: 密码长度不足: %s" % seen)
    check(not any(m.get("event") == "enabled" and m["value"] for m in seen), "login disabled")
    c.send("set", field="phone", value="13800138000")  # 11 digits: ok, but the password still fails
    seen = c.barrier()
    check(("ok", "phone.valid", "号码有效") in field_messages(seen, "phone"), "11 digits ok: %s" % seen)
    check(not any(m.get("event") == "enabled" and m["value"] for m in seen), "still disabled with a short password")
    error, _ = c.reply(c.send("submit"))
    check(error["event"] == "error" and error["code"] == "not_ready", "submit refused while disabled: %s" % error)
    c.send("set", field="phone", value="+86 138 0013 8000")
    c.send("set", field="password", value="secret6")
    c.until(lambda m: m.get("event") == "enabled" and m["value"])
    c.send("submit")
    result, _ = c.until(lambda m: m.get("event") == "result")
    check(result["ok"] and result["message"] == "登录成功" and result["user"] == "tel:+8613800138000" and len(result["token"]) == 43, "login: %s" % result)
    verified, _ = c.reply(c.send("verify", token=result["token"]))
    check(verified["event"] == "verified" and verified["user"] == "tel:+8613800138000", "verify reports the phone account: %s" % verified)
    c.reply(c.send("close"))

    # A phone number is not a username: the username login does not know it.
    c.reply(c.send("open", form="login"))
    c.send("set", field="username", value="8613800138000")
    c.send("set", field="password", value="secret6")
    c.until(lambda m: m.get("event") == "enabled" and m["value"])
    c.send("submit")
    result, _ = c.until(lambda m: m.get("event") == "result")
    check(not result["ok"] and result["messageId"] == "username.invalid_credentials", "phone and username identities are apart: %s" % result)


def locale_switch(path):
    c = Client(path)
    opened, _ = c.reply(c.send("open", form="signup"))
    session = opened["session"]
    c.read(), c.read(), c.read(), c.read(), c.read()
    c.send("set", field="username", value="bad_name")
    c.send("set", field="password", value="abc")
    c.send("set", field="repeatedPassword", value="abd")
    c.barrier()
    # A second connection watches the session: it is re-rendered there too.
    watcher = Client(path)
    watcher.reply(watcher.send("attach", session=session))
    english = [watcher.read() for _ in range(5)]
    reply, before = c.reply(c.send("locale", locale="zh-Hans-CN"))
    check(reply["event"] == "locale" and reply["locale"] == "zh-CN" and reply["session"] == session, "the switch is acknowledged: %s" % reply)
    chinese = [c.read() for _ in range(5)]
    check([m["event"] for m in chinese] == ["validation"] * 3 + ["enabled", "busy"], "the snapshot follows: %s" % chinese)
    for old, new in zip(english, chinese):
        if old["event"] != "validation":
            continue
        check(old["messageId"] == new["messageId"] and old["params"] == new["params"] and old["state"] == new["state"], "same id: %s / %s" % (old, new))
        check(old["message"] != new["message"], "re-rendered: %s / %s" % (old["message"], new["message"]))
    check(chinese[1]["message"] == "密码至少需要 5 个字符" and chinese[1]["params"] == {"min": 5}, "params kept: %s" % chinese[1])
    watched = watcher.until(lambda m: m.get("event") == "locale")[0]
    check(watched["locale"] == "zh-CN", "the attached connection is told too")
    again = [watcher.read() for _ in range(5)]
    check([m.get("message") for m in again[:3]] == [m["message"] for m in chinese[:3]], "and gets the snapshot in zh-CN")
    error, _ = c.reply(c.send("locale", locale="not a tag"))
    check(error["event"] == "error" and error["code"] == "invalid_request", "a malformed tag is invalid_request: %s" % error)
    fr, _ = c.reply(c.send("locale", locale="fr-CA"))
    check(fr["locale"] == "fr", "fr-CA falls back to the operator's fr catalogue: %s" % fr)
    snapshot = [c.read() for _ in range(5)]
    check(snapshot[0]["message"] == "Le nom d'utilisateur ne peut contenir que des lettres ou des chiffres", "fr text: %s" % snapshot[0])
    check(snapshot[2]["message"] == "Les mots de passe diffèrent", "fr: %s" % snapshot[2])


def email_third_party(path):
    """The operator's form through the third-party client: every field from describe."""
    c = Client(path)
    described, _ = c.reply(c.send("describe"))
    form = next(f for f in described["forms"] if f["name"] == "email-signup")
    values = {"email": "Ada@Example.org", "password": "analytical engine", "repeatedPassword": "analytical engine"}
    check([f["name"] for f in form["fields"]] == list(values) and [f["kind"] for f in form["fields"]] == ["email", "secret", "secret"],
          "the operator's fields are described: %s" % form["fields"])
    c.reply(c.send("open", form="email-signup"))
    c.send("set", field="email", value="not an address")
    c.send("set", field="password", value="short")
    seen = c.barrier()
    check(("failed", "email.invalid", "Not an e-mail address") in field_messages(seen, "email"), "e-mail rule: %s" % seen)
    check(("failed", "password.too_short", "Password must be at least 8 characters") in field_messages(seen, "password"), "min-length 8: %s" % seen)
    c.send("set", field="email", value="ada@example.org")
    c.send("set", field="password", value="my ada@example.org")
    seen = c.barrier()
    check(("failed", "password.contains_other", "Password must not contain the E-mail address") in field_messages(seen, "password"),
          "not-containing: %s" % seen)
    # The system's policy (libpwquality with cracklib's dictionary), opt-in by this form.
    c.send("set", field="password", value="password")
    seen = settled(c, "password", c.barrier())
    check(("failed", "password.quality.dictionary", "Password is based on a dictionary word") in field_messages(seen, "password"),
          "libpwquality's dictionary check: %s" % seen)
    c.send("set", field="password", value="aaaaaaaaaaaa")
    seen = settled(c, "password", c.barrier())
    check(("failed", "password.quality.palindrome", "Password is a palindrome") in field_messages(seen, "password"), "libpwquality: %s" % seen)
    described_rules = next(f for f in form["fields"] if f["name"] == "password")["rules"]
    check(described_rules.get("passwordQuality") == "libpwquality" and described_rules.get("notContainingField") == "email",
          "describe states the quality rule: %s" % described_rules)
    for field in form["fields"]:
        c.send("set", field=field["name"], value=values[field["name"]])
    c.until(lambda m: m.get("event") == "enabled" and m["value"])
    c.send("submit")
    result, _ = c.until(lambda m: m.get("event") == "result")
    check(result["ok"] and result["user"] == "mailto:Ada@Example.org", "e-mail signup: %s" % result)
    c.reply(c.send("open", form="email-signup"))
    c.send("set", field="email", value="ADA@example.ORG")
    taken, _ = c.until(lambda m: m.get("event") == "validation" and m["field"] == "email" and m["state"] == "failed")
    check(taken["messageId"] == "email.taken", "case-folded e-mail is one identity: %s" % taken)


def email_interactive(path, directory):
    """signupctl's interactive form, unchanged, on the operator's form, in zh-CN."""
    if shutil.which("tmux") is None:
        print("tmux not installed: interactive part skipped")
        return
    server = "signupd-forms-%d" % os.getpid()

    def tmux(*args):
        return subprocess.run(["tmux", "-L", server] + list(args), capture_output=True, text=True).stdout

    def wait_for(predicate, what):
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            text = tmux("capture-pane", "-p", "-t", "forms")
            if predicate(text):
                return text
            time.sleep(0.05)
        raise AssertionError("timed out waiting for %s:\n%s" % (what, tmux("capture-pane", "-p", "-t", "forms")))

    command = "NO_COLOR=1 LANG=zh_CN.UTF-8 SIGNUPD_SOCKET=%s %s signup --form email-signup; echo EXIT=$?; sleep 60" % (path, SIGNUPCTL)
    try:
        tmux("new-session", "-d", "-s", "forms", "-x", "80", "-y", "24", "bash", "--norc", "-c", command)
        text = wait_for(lambda s: "再次输入密码" in s, "the form in zh-CN")
        check("邮箱地址" in text and "创建账户" in text, "labels and button in zh-CN from LANG:\n" + text)
        tmux("send-keys", "-t", "forms", "grace@example.org")
        wait_for(lambda s: "邮箱地址可用" in s, "available, in zh-CN")
        tmux("send-keys", "-t", "forms", "Tab", "abc")
        wait_for(lambda s: "密码至少需要 8 个字符" in s, "the password rule in zh-CN")
        tmux("send-keys", "-t", "forms", "C-u", "cobol compiler", "Tab", "cobol compiler")
        wait_for(lambda s: "密码有效" in s and "(disabled)" not in s, "enabled")
        tmux("send-keys", "-t", "forms", "Enter")
        wait_for(lambda s: "注册成功" in s, "signed up")
        tmux("send-keys", "-t", "forms", "q")
        text = wait_for(lambda s: "EXIT=" in s, "exit")
        check("EXIT=0" in text and "grace@example.org" in text and "mailto:" not in text, "the operator's form signs up in the TUI, the address shown as written:\n" + text)
    finally:
        tmux("kill-server")


def reload(daemon, path, notify, forms):
    c = Client(path)
    c.reply(c.send("open", form="email-signup"))
    old_snapshot = [c.read() for _ in range(5)]
    check(old_snapshot[0]["field"] == "email", "an open session")
    # The operator tightens the password rule and adds a form.
    with open(os.path.join(forms, "email-signup.form")) as f:
        text = f.read()
    with open(os.path.join(forms, "email-signup.form"), "w") as f:
        f.write(text.replace("rule = min-length 8", "rule = min-length 12"))
    with open(os.path.join(forms, "pin.form"), "w") as f:
        f.write(open(os.path.join(forms, "email-login.form")).read().replace("name = email-login", "name = email-login-2"))
    while True:  # drain
        notify.settimeout(0.1)
        try:
            notify.recv(4096)
        except socket.timeout:
            break
    notify.settimeout(30)
    daemon.send_signal(1)
    messages = []
    while not any("READY=1" in m for m in messages):
        messages.append(notify.recv(4096).decode())
    joined = "\n".join(messages)
    check("RELOADING=1" in joined and "MONOTONIC_USEC=" in joined, "RELOADING=1 with MONOTONIC_USEC: %r" % joined)
    usec = int(joined.split("MONOTONIC_USEC=")[1].split()[0])
    check(abs(usec / 1e6 - time.clock_gettime(time.CLOCK_MONOTONIC)) < 30, "MONOTONIC_USEC is CLOCK_MONOTONIC: %d" % usec)
    # The open session keeps its definition (min 8); a new one gets the new one (min 12).
    c.send("set", field="password", value="ten chars!")
    seen = settled(c, "password", c.barrier())
    check(("ok", "password.acceptable", "Password acceptable") in field_messages(seen, "password"), "the open session keeps min 8: %s" % seen)
    n = Client(path)
    check("email-login-2" in n.hello["forms"], "new connections see the added form: %s" % n.hello["forms"])
    n.reply(n.send("open", form="email-signup"))
    n.send("set", field="password", value="ten chars!")
    seen = n.barrier()
    check(("failed", "password.too_short", "Password must be at least 12 characters") in field_messages(seen, "password"), "new sessions get min 12: %s" % seen)
    # A broken file is refused as a whole; the running forms stay.
    with open(os.path.join(forms, "zz-broken.form"), "w") as f:
        f.write("[form]\nname = zz\n")
    # The unit's ExecReload check reads the running daemon's --forms-dir (helper-42: without
    # it, the check read the default directory and passed while the reload was refused).
    of = subprocess.run([SIGNUPD, "--check-config", "--check-config-of", str(daemon.pid)], capture_output=True, text=True)
    check(of.returncode == 1 and "zz-broken.form:1:1" in of.stderr,
          "--check-config-of PID checks the running daemon's forms.d: %d %r" % (of.returncode, of.stderr[-300:]))
    other = subprocess.run([SIGNUPD, "--check-config", "--check-config-of", str(os.getpid())], capture_output=True, text=True)
    check(other.returncode == 1 and "is not a signupd" in other.stderr, "--check-config-of a process that is not signupd: %r" % other.stderr)
    daemon.send_signal(1)
    messages = []
    while not any("READY=1" in m for m in messages):
        messages.append(notify.recv(4096).decode())
    after = Client(path)
    check("email-login-2" in after.hello["forms"] and "zz" not in after.hello["forms"], "a broken reload keeps the running forms: %s" % after.hello["forms"])
    check(daemon.poll() is None, "the daemon survives a broken reload")


def ready_messages(notify):
    messages = []
    while not any("READY=1" in m for m in messages):
        messages.append(notify.recv(4096).decode())
    return "\n".join(messages)


def last_good(directory, forms, messages):
    saved = os.path.join(directory, "forms.last-good")
    check(os.path.exists(saved) and os.stat(saved).st_mode & 0o777 == 0o600, "the last good configuration is kept, 0600")
    check(os.path.exists(os.path.join(forms, "zz-broken.form")), "forms.d is still broken from the refused reload")
    os.unlink(os.path.join(directory, "notify.sock"))
    daemon, path, notify = start_daemon(directory, forms, messages)
    try:
        c = Client(path)
        check("email-login-2" in c.hello["forms"] and "zz" not in c.hello["forms"], "a start into a broken forms.d serves the last good forms: %s" % c.hello["forms"])
        c.reply(c.send("open", form="email-signup"))
        c.send("set", field="password", value="ten chars!")
        seen = c.barrier()
        check(("failed", "password.too_short", "Password must be at least 12 characters") in field_messages(seen, "password"),
              "the last good forms are the reloaded ones (min 12): %s" % seen)
        status, _ = c.reply(c.send("status"))
        forms_state = status.get("forms", {})
        check(forms_state.get("source") == "last-good" and forms_state.get("errors") == 5 and "zz-broken.form:1:1" in forms_state.get("firstError", ""),
              "status says the last good forms are served, and why: %s" % forms_state)
        shown = subprocess.run([SIGNUPCTL, "--socket", path, "status"], capture_output=True, text=True, timeout=30)
        check("forms.d/messages.d have 5 errors; serving the last configuration that loaded" in shown.stdout, "signupctl status says so: %s" % shown.stdout)
        # The operator fixes the file and reloads: forms.d's forms again.
        os.unlink(os.path.join(forms, "zz-broken.form"))
        daemon.send_signal(1)
        ready_messages(notify)
        status, _ = c.reply(c.send("status"))
        check(status.get("forms") == {"source": "forms.d"}, "after a good reload, forms.d's forms: %s" % status.get("forms"))
    finally:
        daemon.terminate()
        code = daemon.wait(timeout=30)
    check(code == 0, "the daemon on the last good forms exited with %d" % code)
    log = open(os.path.join(directory, "log")).read()
    check("serving the last configuration that loaded" in log and "zz-broken.form:1:1" in log, "the log says why: %s" % log[-600:])
    # A damaged copy is not served: the start fails and says why.
    with open(os.path.join(forms, "zz-broken.form"), "w") as f:
        f.write("[form]\nname = zz\n")
    with open(saved, "r+b") as f:
        f.seek(40)
        f.write(b"\xff\xff")
    start = subprocess.run([SIGNUPD, "--socket", os.path.join(directory, "s2.sock"), "--database", os.path.join(directory, "accounts.sqlite"),
                            "--forms-dir", forms, "--messages-dir", messages], capture_output=True, text=True, timeout=30)
    check(start.returncode == 1 and "forms.last-good: cannot be read: damaged" in start.stderr, "a damaged last good copy fails the start, saying so: %r" % start.stderr[-400:])
    os.unlink(os.path.join(forms, "zz-broken.form"))


def main():
    check_config()
    directory = tempfile.mkdtemp(prefix="signupd-forms-")
    atexit.register(shutil.rmtree, directory, ignore_errors=True)
    forms, messages = os.path.join(directory, "forms.d"), os.path.join(directory, "messages.d")
    shutil.copytree(os.path.join(EXAMPLES, "forms.d"), forms)
    shutil.copytree(os.path.join(EXAMPLES, "messages.d"), messages)
    daemon, path, notify = start_daemon(directory, forms, messages)
    try:
        phone_forms(path)
        locale_switch(path)
        email_third_party(path)
        email_interactive(path, directory)
        reload(daemon, path, notify, forms)
    finally:
        daemon.terminate()
        code = daemon.wait(timeout=30)
    log = open(os.path.join(directory, "log")).read()
    check(code == 0, "daemon exited with %d" % code)
    check("secret6" not in log and "cobol compiler" not in log and "analytical engine" not in log, "no password in the log")
    check("zz-broken.form:1:1: [form] needs" in log, "the refused reload is logged with its location")
    last_good(directory, forms, messages)
    print("forms and locales: %d passed, 0 failed" % passed)


if __name__ == "__main__":
    main()
