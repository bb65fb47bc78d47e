#!/usr/bin/env python3
"""Drives `signupctl signup` in a real terminal (tmux, 80x24) like a person would, and
reads the screen back: a taken name shows taken, a short password shows its error, the
button enables only when everything is valid, submit shows the spinner then the result,
and the terminal is restored on exit (also on Esc and when the daemon goes away).

Waiting is done by polling the screen for the expected text with a deadline: the
terminal has no other event to wait on.

usage: interactive_form_test.py path/to/signupd path/to/signupctl
"""
import shutil
import atexit
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import unicodedata

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "robustness"))
from harness import FAST_HASH, SLOW_HASH, Daemon  # noqa: E402

SIGNUPD, SIGNUPCTL = sys.argv[1], sys.argv[2]
directory = tempfile.mkdtemp(prefix="signupd-tty-")
atexit.register(shutil.rmtree, directory, ignore_errors=True)
SOCK = os.path.join(directory, "signupd.sock")
SESSION = "signupd-tty-%d" % os.getpid()
servers = []
passed = 0


def tmux(*args, check=True):
    # Each form gets its own tmux server, so a finished one never lingers into the next.
    return subprocess.run(["tmux", "-L", servers[-1]] + list(args), check=check, capture_output=True, text=True).stdout


def screen():
    return tmux("capture-pane", "-p", "-t", SESSION)


def wait_for(predicate, what, timeout=15):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        text = screen()
        if predicate(text):
            return text
        time.sleep(0.05)
    raise AssertionError("timed out waiting for %s; screen:\n%s" % (what, screen()))


def check(condition, what):
    global passed
    assert condition, what
    passed += 1


def start_daemon(slow):
    return Daemon(SIGNUPD, directory=directory, args=SLOW_HASH if slow else FAST_HASH).start()


def end_forms(daemon):
    """The last form's tmux server and the daemon go, however the checks ended."""
    if servers:
        tmux("kill-server", check=False)
    daemon.stop()


def open_form(env_prefix="", args="signup", wait_text="Repeat password", size=(80, 24), then="", run=None):
    # The pane runs the form, then reports the exit code and the terminal modes.
    run = run or "%s SIGNUPD_SOCKET=%s %s %s" % (env_prefix, SOCK, SIGNUPCTL, args)
    command = "%s; echo EXIT=$?; %s stty -a | tr ' ' '\\n' | grep -E '^-?(icanon|echo)$' | tr '\\n' ' '; echo; sleep 60" % (run, then)
    if servers:
        tmux("kill-server", check=False)
    servers.append("%s-%d" % (SESSION, len(servers)))
    tmux("new-session", "-d", "-s", SESSION, "-x", str(size[0]), "-y", str(size[1]), "bash", "--norc", "-c", command)
    wait_for(lambda s: wait_text in s, "the form")


def keys(*k):
    tmux("send-keys", "-t", SESSION, *k)


def restored(text):
    return "icanon echo" in text and "-icanon" not in text and "-echo " not in text


daemon = start_daemon(slow=True)
try:
    subprocess.run([SIGNUPCTL, "signup", "--socket", SOCK, "--username", "taken", "--password-stdin"],
                   input="some password\n", text=True, check=True, capture_output=True)

    open_form("NO_COLOR=1")
    text = screen()
    check("Username" in text and "Password" in text and "[ Sign up ]" in text, "form rendered from describe")
    check("(disabled)" in text, "button disabled at first")

    keys("taken")
    wait_for(lambda s: "✗ Username already taken" in s, "a taken name shows taken")
    keys("C-u", "newuser")
    wait_for(lambda s: "✓ Username available" in s, "available name")

    keys("Tab", "abc")
    text = wait_for(lambda s: "Password must be at least 5 characters" in s, "short password error")
    check("•••" in text and "abc" not in text, "the password is masked")
    check("(disabled)" in text, "button still disabled with a short password")

    keys("C-u", "long enough", "Tab", "long enougX")
    text = wait_for(lambda s: "✗ Password different" in s, "mismatch")
    check("(disabled)" in text, "button disabled while the repeat differs")
    keys("BSpace", "h")
    text = wait_for(lambda s: "✓ Passwords match" in s, "repeat ok")
    check("Enter to submit" in text and "(disabled)" not in text, "button enabled only when all is valid")

    keys("Enter")
    wait_for(lambda s: "working…" in s, "submit shows the spinner")
    text = wait_for(lambda s: "✓ Signed up" in s, "result")
    check("newuser" in text, "the result names the user")
    check("any key exits" in text and "Enter submit" not in text and "(disabled)" not in text,
          "after the signup the form says it is done:\n" + text)

    keys("q")
    text = wait_for(lambda s: "EXIT=" in s and "icanon" in s, "exit")
    check("EXIT=0" in text and "Signed up: newuser" in text, "exit 0 after a signup")
    check(restored(text), "terminal modes restored after exit:\n" + text)

    # Esc leaves at once and restores the terminal.
    open_form()
    keys("someone", "Escape")
    text = wait_for(lambda s: "EXIT=" in s and "icanon" in s, "exit after Esc")
    check("EXIT=130" in text and restored(text), "Esc cancels and restores the terminal")

    # The daemon going away mid-form ends the form cleanly.
    open_form()
    daemon.proc.kill()
    daemon.wait()
    keys("x")
    text = wait_for(lambda s: "EXIT=" in s and "icanon" in s, "exit after the daemon died")
    check("EXIT=4" in text and "signupd" in text and restored(text), "a vanished daemon restores the terminal, exit 4")
finally:
    end_forms(daemon)


def lines():
    return tmux("capture-pane", "-p", "-t", SESSION).split("\n")[:-1]


def cursor():
    x, y = tmux("display-message", "-p", "-t", SESSION, "#{cursor_x} #{cursor_y}").split()
    return int(x), int(y)


def resize(columns, rows):
    tmux("resize-window", "-t", SESSION, "-x", str(columns), "-y", str(rows))


def check_frame(columns, rows, what):
    """Nothing scrolled (the title is on the first row), no line wider than the window
    allows, and the cursor sits on the focused field's line, just after its text."""
    text = lines()
    check(len(text) == rows, "%s: %d rows, wanted %d" % (what, len(text), rows))
    check(all(len(line) < columns for line in text), "%s: every line narrower than %d:\n%s" % (what, columns, "\n".join(text)))
    check("Sign up — " in text[0] or "Sign up — " in text[1], "%s: the title is still at the top (nothing scrolled):\n%s" % (what, "\n".join(text)))
    x, y = cursor()
    check("›" in text[y] and x == len(text[y].rstrip()), "%s: the cursor (%d,%d) is at the end of the focused field %r" % (what, x, y, text[y]))


def monitor_events(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


daemon = start_daemon(slow=False)
try:
    # Auto-type bursts (user<Tab>password<Enter> in one write) into one login form, watched
    # by `signupctl monitor`: exactly one submit per Enter — one busy and one result each,
    # never a second login attempt from an `enabled` that was already on its way.
    open_form("NO_COLOR=1", args="login", wait_text="[ Log in ]")
    session_id = [l for l in lines() if "session " in l][0].split("session ")[1].strip()
    events_path = os.path.join(directory, "burst-monitor.jsonl")
    watcher = subprocess.Popen([SIGNUPCTL, "monitor", "--json", "--socket", SOCK, "--session", session_id],
                               stdout=open(events_path, "w"))
    wait_for(lambda s: os.path.getsize(events_path) > 0, "the monitor to attach")
    bursts = 10
    for i in range(bursts):
        back = [] if i == 0 else ["BTab", "C-e", "C-u"]
        keys(*(back + ["yann%d" % i, "Tab", "C-e", "C-u", "wrongpw", "Enter"]))
        deadline = time.monotonic() + 15
        while sum(1 for e in monitor_events(events_path) if e.get("event") == "result") < i + 1:
            assert time.monotonic() < deadline, "burst %d: no result; screen:\n%s" % (i, screen())
            time.sleep(0.05)
    keys("Escape")
    wait_for(lambda s: "EXIT=130" in s, "Esc after the bursts")
    check(watcher.wait(timeout=30) == 0, "the monitor ends with the session")
    seen = monitor_events(events_path)
    results = [e for e in seen if e.get("event") == "result"]
    starts = [e for e in seen if e.get("event") == "busy" and e.get("value") is True]
    check(len(results) == bursts and len(starts) == bursts and all(e["eventOk"] is False for e in results),
          "%d bursts: %d logins started, %d results (want %d each)" % (bursts, len(starts), len(results), bursts))

    # A password manager's auto-type: everything in one burst, Enter included, no pause.
    open_form("NO_COLOR=1")
    keys("burst", "Tab", "pass word", "Tab", "pass word", "Enter")
    text = wait_for(lambda s: "✓ Signed up" in s, "the burst signed up")
    check("(burst)" in text and "Not ready" not in text, "a burst of keys ending in Enter signs up: \n" + text)
    keys("q")
    text = wait_for(lambda s: "EXIT=" in s and "icanon" in s, "exit after the burst")
    check("EXIT=0" in text and "Signed up: burst" in text and restored(text), "exit 0 after the burst")
    # The same burst with a taken name: the daemon's verdict shows, nothing waits forever.
    open_form("NO_COLOR=1")
    keys("taken", "Tab", "pass word", "Tab", "pass word", "Enter")
    text = wait_for(lambda s: "Not submitted: Username — Username already taken" in s, "the refusal")
    check("Signed up" not in text and "(disabled)" in text, "a burst with a taken name is not submitted:\n" + text)
    keys("Up", "Up", "C-u", "burst2", "Down", "Down", "Enter")
    text = wait_for(lambda s: "✓ Signed up" in s, "signed up after fixing the name")
    check("(burst2)" in text, "fixing the name and pressing Enter again signs up")
    # The other order: the name's verdict is on screen before Enter. The refusal reads the same.
    keys("q")
    wait_for(lambda s: "EXIT=" in s, "exit after burst2")
    open_form("NO_COLOR=1")
    keys("taken")
    wait_for(lambda s: "Username already taken" in s, "the taken verdict before Enter")
    keys("Tab", "pass word", "Tab", "pass word")
    wait_for(lambda s: "Passwords match" in s, "both passwords checked")
    keys("Enter")
    text = wait_for(lambda s: "Not submitted:" in s or "not enabled" in s, "the refusal after the verdict")
    check("Not submitted: Username — Username already taken" in text, "a refusal after the verdict names the field and why:\n" + text)

    # Editing in the middle of a field; special keys never type their escape sequences.
    open_form("NO_COLOR=1")
    keys("alce", "Left", "Left", "i")
    text = wait_for(lambda s: "› alice" in s, "an insertion in the middle")
    check(cursor()[0] == len("  › al") + 1, "the cursor stays after the inserted character: %s" % (cursor(),))
    keys("End", "2", "Home", "Delete", "DC", "PageUp", "F5", "Insert", "IC")
    text = wait_for(lambda s: "› ice2" in s, "Home and Delete")
    check("~" not in text and "5~" not in text, "Delete, PgUp, F5, Insert type nothing:\n" + text)
    tmux("send-keys", "-t", SESSION, "-H", "1b", "4f", "48")  # SS3 Home (ESC O H), as some terminals send it
    keys("al", "C-e", "C-w", "alice3")
    text = wait_for(lambda s: "› alice3" in s and "✓ Username available" in s, "Ctrl-W and retyping")
    tmux("send-keys", "-t", SESSION, "-H", "1b", "4f", "42")  # SS3 Down: the next field, nothing typed
    keys("pass word")
    text = wait_for(lambda s: "•••••••••" in s, "SS3 down moved to the password")
    check("B" not in text.split("Password")[1].split("Repeat")[0], "ESC O B typed nothing:\n" + text)
    # UTF-8 split across two reads: each half alone is no character; together one é.
    keys("Up")
    tmux("send-keys", "-t", SESSION, "-H", "c3")
    tmux("send-keys", "-t", SESSION, "-H", "a9")
    wait_for(lambda s: "› alice3é" in s, "é from two reads")
    keys("BSpace")  # one Backspace removes the whole character
    wait_for(lambda s: "› alice3\n" in s and "✓ Username available" in s, "é removed whole")
    keys("Down", "Down")
    # A bracketed paste: one chunk of text, its newline dropped, not an Enter.
    tmux("set-buffer", "pass word\n")
    tmux("paste-buffer", "-p", "-t", SESSION)
    text = wait_for(lambda s: "✓ Passwords match" in s, "the pasted repeat")
    check("✓ Signed up" not in text, "a pasted newline does not submit")
    keys("Enter")
    text = wait_for(lambda s: "✓ Signed up" in s, "signed up after editing")
    check("(alice3)" in text, "the daemon got the edited name: \n" + text)
    keys("q")
    wait_for(lambda s: "EXIT=0" in s, "exit")

    # Ctrl-Z does not suspend, and says so rather than leaving the user to type into the form unaware.
    open_form("NO_COLOR=1")
    keys("C-z")
    wait_for(lambda s: "Ctrl-Z does not suspend" in s, "Ctrl-Z says the form does not suspend")
    keys("Escape")
    wait_for(lambda s: "EXIT=130" in s, "Esc")

    # A pasted user<Tab>password<Tab>password fills the three fields; nothing lands in clear text.
    open_form("NO_COLOR=1")
    tmux("set-buffer", "dave\tsecret1\tsecret1")
    tmux("paste-buffer", "-p", "-t", SESSION)
    text = wait_for(lambda s: "✓ Passwords match" in s, "the pasted fields")
    check("dave" in text and "secret1" not in text and "davesecret" not in text and "Signed up" not in text,
          "a paste with Tabs fills the fields, passwords masked, nothing submitted:\n" + text)
    keys("Escape")
    wait_for(lambda s: "EXIT=130" in s, "Esc")

    # Wide characters: the cursor goes after them by display width (用户 takes 4 columns, 👍🏽 2).
    for typed, width in [("用户", 4), ("👍🏽x", 3)]:
        open_form("NO_COLOR=1")
        keys(typed)
        wait_for(lambda s: "› " + typed in s, "%s typed" % typed)
        check(cursor()[0] == len("  › ") + width, "after %s the cursor is at x=%d: %s" % (typed, len("  › ") + width, cursor()))
        keys("Escape")
        wait_for(lambda s: "EXIT=130" in s, "Esc")

    # Resizing redraws at once, and nothing ever scrolls: 80x24, 60x20, 40x12 and back.
    open_form("NO_COLOR=1")
    keys("resizer", "Tab", "pass")
    text = wait_for(lambda s: "Password must be at least 5" in s, "a field error")
    session_line = [l for l in lines() if "session " in l]
    check(len(session_line) == 1 and len(session_line[0].split("session ")[1].strip()) == 16, "the footer shows the session id: %s" % session_line)
    session_id = session_line[0].split("session ")[1].strip()
    check_frame(80, 24, "80x24")
    check("Esc quit" in text, "80x24: the key hints show")
    resize(60, 20)
    text = wait_for(lambda s: len(s.split("\n")) == 21 and "Esc quit" in s and "session " + session_id in s, "the 60x20 layout")
    check_frame(60, 20, "60x20")
    resize(40, 12)
    text = wait_for(lambda s: "Terminal too small" in s, "the too-small notice")
    notice = [l.strip() for l in text.split("\n") if l.strip()]
    check(notice[0].startswith("Esc quits.") and " ".join(notice).startswith("Esc quits. Terminal too small (40×12); need 48×"),
          "40x12: how to quit first, then the whole notice, wrapped:\n" + text)
    check(all(len(l) < 40 for l in lines()), "40x12: the notice fits")
    keys("xyz", "BSpace")  # nothing to see, so nothing is edited; the notice says so
    wait_for(lambda s: "Typing is ignored" in s, "the dropped keys noticed")
    resize(80, 24)
    text = wait_for(lambda s: "Tab/↑/↓ move" in s, "the 80x24 layout again")
    check(any(l.strip() == "› ••••" for l in text.split("\n")) and "resizer" in text and "Password must be at least 5" in text,
          "the values survive the resizes, untouched by keys typed while too small:\n" + text)
    check_frame(80, 24, "80x24 again")
    # The id in the footer is the one `sessions` lists and `monitor` attaches to.
    listed = subprocess.run([SIGNUPCTL, "sessions", "--socket", SOCK], capture_output=True, text=True)
    check(session_id in listed.stdout, "signupctl sessions lists the form's session: %r" % listed.stdout)
    keys("Escape")
    text = wait_for(lambda s: "EXIT=" in s and "icanon" in s, "exit after Esc")
    check("EXIT=130" in text and restored(text), "Esc: 130, terminal restored")

    # TERM=dumb: plain prompts, line by line, no cursor addressing; secrets are not echoed.
    open_form("TERM=dumb", wait_text="Username:")
    keys("dumbuser", "Enter")
    wait_for(lambda s: "Password:" in s, "the password prompt")
    keys("abc", "Enter")
    wait_for(lambda s: "✗ Password must be at least 5 characters" in s, "the error, then the prompt again")
    keys("pass word", "Enter")
    wait_for(lambda s: "Repeat password:" in s, "the repeat prompt")
    keys("pass word", "Enter")
    text = wait_for(lambda s: "EXIT=" in s and "icanon" in s, "exit in line mode")
    check("EXIT=0" in text and "Signed up: dumbuser" in text and "pass word" not in text and "abc" not in text and restored(text),
          "TERM=dumb signs up line by line without echoing passwords:\n" + text)
    check("\x1b" not in tmux("capture-pane", "-p", "-e", "-t", SESSION).replace("\x1b[0m", "").replace("\x1b[39m", ""), "no escape sequences in line mode")
    check("Username: dumbuser" in text, "the prompts stay in the scrollback, as lines:\n" + text)
    # A TERM without a terminfo entry gets line mode too; end of input (Ctrl-D) cancels with 130.
    open_form("TERM=no-such-terminal", wait_text="Username:")
    check("Ctrl-C or Ctrl-D cancels" in screen(), "an unknown TERM gets the line prompts")
    keys("C-d")
    text = wait_for(lambda s: "EXIT=" in s and "icanon" in s, "exit after Ctrl-D")
    check("EXIT=130" in text and restored(text), "Ctrl-D at a line prompt cancels, exit 130:\n" + text)
    check("\nsignupctl: cancelled" in text and "Username: signupctl" not in text, "the cancel message starts its own line:\n" + text)
    # Auto-type in line mode: Tab ends a field as Enter does, and no password is echoed.
    open_form("TERM=dumb", wait_text="Username:")
    keys("bob", "Tab", "secret1", "Tab", "secret1", "Enter")
    text = wait_for(lambda s: "EXIT=" in s and "icanon" in s, "exit after the line-mode burst")
    check("EXIT=0" in text and "Signed up: bob" in text and "secret1" not in text and restored(text),
          "TERM=dumb: user<Tab>password<Tab>password<Enter> signs up, nothing secret echoed:\n" + text)
    # Auto-type after a field that fails (helper-31): what was typed ahead, the password, is
    # dropped with the failure, never echoed into the failed field's prompt again.
    open_form("TERM=dumb", wait_text="Username:")
    keys("bad name!", "Tab", "typedahead1", "Tab", "typedahead1", "Enter")
    wait_for(lambda s: "✗ Username can only contain letters or digits" in s and s.count("Username:") == 2, "the failure, then the first prompt again")
    keys("carol", "Tab", "secret1", "Tab", "secret1", "Enter")
    text = wait_for(lambda s: "EXIT=" in s and "icanon" in s, "exit after the retyped burst")
    check("EXIT=0" in text and "Signed up: carol" in text and "typedahead1" not in text and "secret1" not in text and restored(text),
          "TERM=dumb: a burst after a failed field is dropped, not echoed:\n" + text)
    # Ctrl-C at a line prompt under --json: the cancelled envelope, exit 130, no death by SIGINT.
    out = os.path.join(directory, "cancel.json")
    open_form(run="TERM=dumb SIGNUPD_SOCKET=%s %s login --json > %s" % (SOCK, SIGNUPCTL, out), wait_text="Username:")
    keys("someone", "C-c")
    text = wait_for(lambda s: "EXIT=" in s and "icanon" in s, "exit after Ctrl-C in line mode")
    with open(out) as f:
        written = [json.loads(line) for line in f if line.strip()]
    check("EXIT=130" in text and restored(text) and len(written) == 1 and written[0]["ok"] is False
          and written[0]["error"]["code"] == "cancelled", "Ctrl-C at a prompt with --json: %r\n%s" % (written, text))
    # A refused login in line mode says why and starts over.
    open_form("TERM=dumb", args="login", wait_text="Username:")
    keys("dumbuser", "Enter")
    wait_for(lambda s: "Password:" in s, "the password prompt")
    keys("wrong pass", "Enter")
    wait_for(lambda s: "✗ Invalid username or password" in s and s.count("Username:") == 2, "the refusal, then the first prompt again")
    keys("dumbuser", "Enter")
    wait_for(lambda s: s.count("Password:") == 2, "the password prompt again")
    keys("pass word", "Enter")
    text = wait_for(lambda s: "EXIT=" in s and "icanon" in s, "exit after the line-mode login")
    check("EXIT=0" in text and "Logged in: dumbuser" in text and "wrong pass" not in text, "TERM=dumb login after a refusal:\n" + text)

    # TOKEN=$(signupctl login): the form draws on /dev/tty, the token alone goes to stdout.
    open_form(run="TOKEN=$(NO_COLOR=1 SIGNUPD_SOCKET=%s %s login)" % (SOCK, SIGNUPCTL), wait_text="[ Log in ]",
              then='echo "TOKEN=[$TOKEN]"; %s verify --socket %s -- "$TOKEN";' % (SIGNUPCTL, SOCK))
    keys("dumbuser", "Tab", "pass word", "Enter")
    wait_for(lambda s: "✓ Logged in" in s, "logged in")
    keys("q")
    text = wait_for(lambda s: "EXIT=" in s and "icanon" in s, "exit after the login")
    token = text.split("TOKEN=[")[1].split("]")[0]
    check("EXIT=0" in text and len(token) == 43 and "\ndumbuser" in text, "TOKEN=$(signupctl login) captures the token, which verifies:\n" + text)

    # A prompted signup asks for the password twice; a different repeat is refused.
    open_form(args="signup --username gina", wait_text="Password:")
    keys("pass word", "Enter")
    wait_for(lambda s: "Repeat password:" in s, "the second prompt")
    keys("pass wore", "Enter")
    text = wait_for(lambda s: "EXIT=" in s and "icanon" in s, "exit after a mismatch")
    check("EXIT=2" in text and "Password different" in text and restored(text), "a different repeat is refused, exit 2:\n" + text)
    open_form(args="signup --username gina", wait_text="Password:")
    keys("pass word", "Enter", "pass word", "Enter")
    text = wait_for(lambda s: "EXIT=" in s and "icanon" in s, "exit after the prompted signup")
    check("EXIT=0" in text and "Signed up: gina" in text and "pass word" not in text, "prompted signup with the password twice:\n" + text)

    # LANG=zh_CN.UTF-8: every word on the screen is Chinese but the person's own input (what
    # they typed, the command included), the token, the session id and the names printed on
    # the keys (Tab, Enter, Esc, Home, End, Ctrl) — through a refusal, Ctrl-Z, too-small
    # windows, a signup, a login and the daemon going away.
    KEYCAPS = {"Tab", "Enter", "Esc", "Home", "End", "Ctrl"}

    def english_words(text, own=()):
        text = re.sub(r"令牌：\s*\S+", "", text)  # the token
        text = re.sub(r"会话 [0-9a-f]{16}|（会话 [0-9a-f]{16}", "", text)  # the session id
        text = "\n".join(l for l in text.split("\n") if not l.startswith("EXIT=") and "icanon" not in l)  # the test's own probe
        for word in own:
            text = text.replace(word, "")
        return [w for w in re.findall(r"[A-Za-z]{2,}", text) if w not in KEYCAPS]

    def all_chinese(text, what, own=()):
        check(not english_words(text, own), "zh_CN, %s: English words %s on the screen:\n%s" % (what, english_words(text, own), text))

    zh_name = "zh%d" % os.getpid()
    open_form("LANG=zh_CN.UTF-8 NO_COLOR=1", wait_text="再次输入密码")
    keys("taken")
    text = wait_for(lambda s: "用户名已存在" in s, "a taken name, in Chinese")
    check("Esc 退出" in text and "（不可用）" in text and "会话 " in text and "注册" in text, "zh_CN: hints, button state and footer:\n" + text)
    all_chinese(text, "a taken name", own=["taken"])
    keys("Tab", "abc")
    text = wait_for(lambda s: "密码至少需要" in s, "a Chinese field error")
    all_chinese(text, "a field error", own=["taken"])
    keys("Tab", "Enter")  # submit refused: the name is taken
    text = wait_for(lambda s: "未提交" in s, "the refusal, in Chinese")
    all_chinese(text, "a refused submit", own=["taken"])
    keys("C-z")
    text = wait_for(lambda s: "Ctrl-Z" in s and "挂起" in s, "Ctrl-Z, in Chinese")
    all_chinese(text, "Ctrl-Z", own=["taken"])
    for columns, rows in [(40, 10), (24, 6), (12, 8)]:
        resize(columns, rows)
        text = wait_for(lambda s: "退出" in s.replace("\n", "") and "终端太小" in s.replace("\n", "").replace(" ", ""), "the too-small notice at %dx%d" % (columns, rows))
        check(not any(l.strip()[:1] in "，。、）：；" for l in text.split("\n") if l.strip()), "%dx%d: no line starts with closing punctuation:\n%s" % (columns, rows, text))
        check(text.replace(" ", "").replace("\n", "").startswith("按Esc退出") and all(sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in l) < columns for l in text.split("\n")),
              "%dx%d: how to quit first, the notice wrapped to the window:\n%s" % (columns, rows, text))
        all_chinese(text, "a %dx%d window" % (columns, rows))
    resize(80, 24)
    wait_for(lambda s: "Tab/↑/↓ 切换" in s, "the form again")  # the too-small notice says "Esc 退出" too
    keys("Up", "Up", "C-u", zh_name, "Tab", "C-u", "long enough", "Tab", "long enough", "Enter")
    text = wait_for(lambda s: "注册成功" in s, "signed up, in Chinese", timeout=30)
    check(text.count("按任意键退出") == 1 and "[ 注册 ]  完成" in text, "zh_CN: done once, in Chinese:\n" + text)
    all_chinese(text, "signed up", own=[zh_name])
    keys("q")
    wait_for(lambda s: "EXIT=0" in s, "exit after the signup")

    open_form("LANG=zh_CN.UTF-8 NO_COLOR=1", args="login", wait_text="密码")
    keys(zh_name, "Tab", "long enough", "Enter")
    text = wait_for(lambda s: "登录成功" in s, "logged in, in Chinese", timeout=30)
    check("令牌：" in text, "the token is labelled in Chinese:\n" + text)
    all_chinese(text, "logged in", own=[zh_name])
    keys("q")
    wait_for(lambda s: "EXIT=0" in s, "exit after the login")

    # The daemon goes away under an open form: the reason, in Chinese, after the form ends.
    open_form("LANG=zh_CN.UTF-8 NO_COLOR=1", wait_text="再次输入密码")
    daemon.stop()
    text = wait_for(lambda s: "EXIT=" in s and "icanon" in s, "the form ends when the daemon stops")
    check("服务" in text and restored(text), "the daemon's going is said in Chinese, the terminal restored:\n" + text)
    all_chinese(text, "the daemon going away", own=["signupctl"])
    daemon = start_daemon(slow=True)

    # TERM=dumb in Chinese: the line-mode header and prompts.
    open_form("LANG=zh_CN.UTF-8 TERM=dumb", wait_text="用户名")
    text = screen()
    check("按 Ctrl-C 或 Ctrl-D 取消" in text, "the line-mode header in Chinese:\n" + text)
    all_chinese(text, "TERM=dumb")
    keys("C-c")
    wait_for(lambda s: "EXIT=130" in s, "cancelled")

    # SIGTERM and SIGHUP restore the terminal from the signal handler, in full screen and at a password prompt.
    for sig, args, wait_text in [("TERM", "signup", "Repeat password"), ("HUP", "signup", "Repeat password"), ("TERM", "signup --username x", "Password:")]:
        open_form(args=args, wait_text=wait_text)
        pane = tmux("display-message", "-p", "-t", SESSION, "#{pane_pid}").strip()
        child = subprocess.run(["pgrep", "-P", pane, "-f", "signupctl"], capture_output=True, text=True).stdout.split()
        check(len(child) == 1, "found the signupctl process: %s" % child)
        subprocess.run(["kill", "-" + sig, child[0]], check=True)
        text = wait_for(lambda s: "EXIT=" in s and "icanon" in s, "exit after SIG%s" % sig)
        check(restored(text), "SIG%s during %r restores the terminal:\n%s" % (sig, args, text))
finally:
    end_forms(daemon)

print("interactive form in tmux: %d passed, 0 failed" % passed)
