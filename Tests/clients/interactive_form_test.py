#!/usr/bin/env python3
"""Drives `signupctl signup` in a real terminal (tmux, 80x24) like a person would, and
reads the screen back: a taken name shows taken, a short password shows its error, the
button enables only when everything is valid, submit shows the spinner then the result,
and the terminal is restored on exit (also on Esc and when the daemon goes away).

Waiting is done by polling the screen for the expected text with a deadline: the
terminal has no other event to wait on.

usage: interactive_form_test.py path/to/signupd path/to/signupctl
"""
import os
import socket
import subprocess
import sys
import tempfile
import time

SIGNUPD, SIGNUPCTL = sys.argv[1], sys.argv[2]
directory = tempfile.mkdtemp(prefix="signupd-tty-")
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
    notify_path = os.path.join(directory, "notify-%d.sock" % time.monotonic_ns())
    notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    notify.bind(notify_path)
    notify.settimeout(30)
    cost = ["--argon2-ops", "4", "--argon2-memory-kib", "262144"] if slow else ["--argon2-ops", "1", "--argon2-memory-kib", "8"]
    daemon = subprocess.Popen([SIGNUPD, "--socket", SOCK, "--database", os.path.join(directory, "accounts.sqlite")] + cost,
                              env={"NOTIFY_SOCKET": notify_path, "PATH": "/usr/bin:/bin"},
                              stderr=open(os.path.join(directory, "signupd.log"), "a"))
    while b"READY=1" not in notify.recv(4096):
        pass
    return daemon


def open_form(env_prefix=""):
    # The pane runs the form, then reports the exit code and the terminal modes.
    command = "%s SIGNUPD_SOCKET=%s %s signup; echo EXIT=$?; stty -a | tr ' ' '\\n' | grep -E '^-?(icanon|echo)$' | tr '\\n' ' '; echo; sleep 60" % (
        env_prefix, SOCK, SIGNUPCTL)
    if servers:
        tmux("kill-server", check=False)
    servers.append("%s-%d" % (SESSION, len(servers)))
    tmux("new-session", "-d", "-s", SESSION, "-x", "80", "-y", "24", "bash", "--norc", "-c", command)
    wait_for(lambda s: "Repeat password" in s, "the form")


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
    wait_for(lambda s: "✗ Username already taken" in s, "taken name")
    check(True, "a taken name shows taken")
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
    text = wait_for(lambda s: "✓ Password repeated" in s, "repeat ok")
    check("Enter to submit" in text and "(disabled)" not in text, "button enabled only when all is valid")

    keys("Enter")
    wait_for(lambda s: "working…" in s, "spinner while signing up")
    check(True, "submit shows the spinner")
    text = wait_for(lambda s: "✓ Signed up" in s, "result")
    check("newuser" in text, "the result names the user")

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
    daemon.kill()
    daemon.wait()
    keys("x")
    text = wait_for(lambda s: "EXIT=" in s and "icanon" in s, "exit after the daemon died")
    check("EXIT=4" in text and "signupd" in text and restored(text), "a vanished daemon restores the terminal, exit 4")
finally:
    if servers:
        tmux("kill-server", check=False)
    if daemon.poll() is None:
        daemon.terminate()
        daemon.wait(timeout=30)

print("interactive form in tmux: %d passed, 0 failed" % passed)
