#!/usr/bin/env python3
"""Keeps N signups (or logins) running against signupd for D seconds and prints
`kind=signup concurrency=N completed=C secs=S per_sec=R failed=F`.

Each worker has its own connection and loops: open the form, fill it in, submit, wait
for the result. Logins use accounts created first (one per worker).

usage: form_load.py SOCKET signup|login CONCURRENCY SECONDS
"""
import json
import os
import socket
import sys
import threading
import time

path, kind, concurrency, seconds = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
completed = 0
failed = 0
lock = threading.Lock()
stop_at = 0.0


class Conn:
    def __init__(self):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(120)
        self.sock.connect(path)
        self.reader = self.sock.makefile("rb")
        self.reader.readline()

    def send(self, **message):
        self.sock.sendall(json.dumps(message).encode() + b"\n")

    def until(self, predicate):
        while True:
            message = json.loads(self.reader.readline())
            if predicate(message):
                return message

    def run_form(self, form, username, password):
        self.send(op="open", form=form, id="o")
        self.until(lambda m: m.get("event") == "busy")
        self.send(op="set", field="username", value=username)
        self.send(op="set", field="password", value=password)
        if form == "signup":
            self.send(op="set", field="repeatedPassword", value=password)
        self.until(lambda m: m.get("event") == "enabled" and m["value"])
        self.send(op="submit")
        result = self.until(lambda m: m.get("event") == "result")
        self.send(op="close")
        self.until(lambda m: m.get("event") == "closed")
        return result["ok"]


def worker(index):
    global completed, failed
    conn = Conn()
    name = "load%d%dw%d" % (os.getpid(), int(time.time()), index)
    if kind == "login":
        conn.run_form("signup", name, "password %d" % index)
    ready.wait()  # the clock starts when every worker is set up
    round_ = 0
    while time.monotonic() < stop_at:
        round_ += 1
        if kind == "signup":
            ok = conn.run_form("signup", "%sr%d" % (name, round_), "password %d" % index)
        else:
            ok = conn.run_form("login", name, "password %d" % index)
        with lock:
            if time.monotonic() <= stop_at:
                completed += 1 if ok else 0
                failed += 0 if ok else 1


# Logins first create their accounts; the clock starts once every worker is ready.
start = 0.0


def begin():
    global start, stop_at
    start = time.monotonic()
    stop_at = start + seconds


ready = threading.Barrier(concurrency, action=begin)
threads = [threading.Thread(target=worker, args=(i,), daemon=True) for i in range(concurrency)]
for t in threads:
    t.start()
for t in threads:
    t.join()
elapsed = min(time.monotonic(), stop_at) - start
print("kind=%s concurrency=%d completed=%d secs=%.1f per_sec=%.1f failed=%d" % (
    kind, concurrency, completed, elapsed, completed / elapsed if elapsed else 0, failed))
