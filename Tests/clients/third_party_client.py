#!/usr/bin/env python3
"""A signupd client written from PROTOCOL.md alone, with Python's standard library only.

It starts the daemon binary it is given (as any integration would find one running),
then: describe, a signup typed character by character with live validation, a login,
and a token check. Every assertion is about what PROTOCOL.md promises.

usage: third_party_client.py path/to/signupd
"""
import shutil
import atexit
import json
import os
import socket
import subprocess
import sys
import tempfile


class Client:
    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(20)
        self.sock.connect(path)
        self.reader = self.sock.makefile("rb")
        self.next_id = 0
        self.hello = self.read()

    def read(self):
        line = self.reader.readline()
        assert line.endswith(b"\n"), "connection closed"
        return json.loads(line)

    def send(self, op, **members):
        self.next_id += 1
        message = dict(op=op, id=self.next_id, **members)
        self.sock.sendall(json.dumps(message).encode() + b"\n")
        return self.next_id

    def until(self, predicate):
        seen = []
        while True:
            message = self.read()
            if predicate(message):
                return message, seen
            seen.append(message)

    def reply(self, request_id):
        """The direct reply (or error) to a request; what came before it is returned too."""
        return self.until(lambda m: m.get("id") == request_id and m["event"] not in ("validation", "enabled", "busy"))

    def barrier(self):
        """A set has no reply of its own when nothing changes: a ping answered means every
        earlier request was processed (PROTOCOL.md, "Ordering")."""
        _, seen = self.reply(self.send("ping"))
        return seen


def main(binary):
    directory = tempfile.mkdtemp(prefix="signupd-py-")
    atexit.register(shutil.rmtree, directory, ignore_errors=True)
    path = os.path.join(directory, "signupd.sock")
    notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    notify.bind(os.path.join(directory, "notify.sock"))
    notify.settimeout(30)
    env = {"NOTIFY_SOCKET": os.path.join(directory, "notify.sock"), "PATH": "/usr/bin:/bin"}
    daemon = subprocess.Popen(
        [binary, "--socket", path, "--database", os.path.join(directory, "accounts.sqlite"),
         "--argon2-ops", "1", "--argon2-memory-kib", "8"],
        env=env, stderr=open(os.path.join(directory, "log"), "w"))
    checks = 0
    try:
        while b"READY=1" not in notify.recv(4096):
            pass
        c = Client(path)
        assert c.hello["event"] == "hello" and c.hello["protocol"].startswith("signup/1"), c.hello
        checks += 1

        description, _ = c.reply(c.send("describe"))
        forms = {form["name"]: form for form in description["forms"]}
        assert [f["name"] for f in forms["signup"]["fields"]] == ["username", "password", "repeatedPassword"]
        assert [f["secret"] for f in forms["signup"]["fields"]] == [False, True, True]
        checks += 1

        opened, snapshot = c.reply(c.send("open", form="signup"))
        session = opened["session"]
        # The snapshot follows the opened reply: one validation per field, enabled, busy.
        rest = [c.read() for _ in range(5)]
        assert [m["event"] for m in rest] == ["validation"] * 3 + ["enabled", "busy"], rest
        assert all(m["session"] == session for m in rest)
        last_seq = rest[-1]["seq"]
        checks += 1

        # Type the username a character at a time, as a GUI would send it.
        name = "py%d" % os.getpid()
        events = []
        for i in range(1, len(name) + 1):
            c.send("set", field="username", value=name[:i])
        final, seen = c.until(lambda m: m.get("event") == "validation" and m["field"] == "username" and m["state"] == "ok")
        events = seen + [final]
        assert final["message"] == "Username available", final
        seqs = [m["seq"] for m in events if "seq" in m]
        assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs) and seqs[0] > last_seq, seqs
        checks += 1

        c.send("set", field="password", value="abc")
        seen = c.barrier()
        assert any(m.get("state") == "failed" and m["message"] == "Password must be at least 5 characters" for m in seen), seen
        c.send("set", field="password", value="tr0ub4dor&3")
        c.send("set", field="repeatedPassword", value="tr0ub4dor&3")
        enabled, _ = c.until(lambda m: m.get("event") == "enabled")
        assert enabled["value"] is True
        checks += 1

        c.send("submit")
        busy, _ = c.until(lambda m: m.get("event") == "busy")
        assert busy["value"] is True
        result, _ = c.until(lambda m: m.get("event") == "result")
        assert result["ok"] is True and result["user"] == name and result["message"] == "Signed up", result
        done, _ = c.until(lambda m: m.get("event") == "busy")
        assert done["value"] is False
        error, _ = c.reply(c.send("set", field="username", value="x"))
        assert error["event"] == "error" and error["code"] == "finished", error
        checks += 1

        c.reply(c.send("close"))
        c.reply(c.send("open", form="login"))
        c.send("set", field="username", value=name.upper())
        c.send("set", field="password", value="tr0ub4dor&3")
        c.until(lambda m: m.get("event") == "enabled" and m["value"])
        c.send("submit")
        result, _ = c.until(lambda m: m.get("event") == "result")
        assert result["ok"] is True and result["user"] == name and len(result["token"]) == 43, result
        verified, _ = c.reply(c.send("verify", token=result["token"]))
        assert verified["event"] == "verified" and verified["user"] == name, verified
        checks += 1
    finally:
        daemon.terminate()
        code = daemon.wait(timeout=30)
    assert code == 0, "daemon exited with %d" % code
    print("third-party Python client: %d passed, 0 failed" % checks)


if __name__ == "__main__":
    main(sys.argv[1])
