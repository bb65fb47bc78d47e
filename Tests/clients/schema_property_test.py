"""Every line signupd writes matches the project's JSON Schema, whatever a schema-valid client
sends. Requests are generated from schema/signup-protocol-v1.schema.json by
hypothesis-jsonschema (a third-party generator: it knows nothing of signupd but the schema),
then sent in real sessions: each connection opens a session first, and a generated `session`,
`form` or `field` is replaced, some of the time, by a real one, so that requests reach live
forms and not only the refusals. Each request is followed by a ping; every line up to its
pong (and any later event) is validated against the schema's `serverMessage`.

usage: schema_property_test.py path/to/signupd [REQUESTS]   (default 2,000)
"""
import json
import os
import socket
import sys

import jsonschema
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from hypothesis_jsonschema import from_schema

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "robustness"))
from harness import FAST_HASH, Checks, Daemon  # noqa: E402

SCHEMA_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "schema", "signup-protocol-v1.schema.json")
SCHEMA = json.load(open(SCHEMA_PATH))
DEFS = SCHEMA["$defs"]
SERVER = jsonschema.Draft202012Validator({"$defs": DEFS, "$ref": "#/$defs/serverMessage"})
# One strategy per operation: the request schema is a oneOf of them, told apart by `op`.
OPERATIONS = [ref["$ref"].rsplit("/", 1)[1] for ref in DEFS["request"]["oneOf"]]
REQUESTS = st.one_of([from_schema({"$defs": DEFS, "$ref": "#/$defs/" + name}) for name in OPERATIONS])
FORMS = ["signup", "login", "phone-signup", "phone-login"]
FIELDS = ["username", "password", "repeatedPassword", "phone"]


class Peer:
    """One connection with a session of its own; every line it reads is validated."""

    def __init__(self, path, checks, seen):
        self.path, self.checks, self.seen = path, checks, seen
        self.barrier = 0
        self.connect()

    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.settimeout(30)
        self.sock.connect(self.path)
        self.reader = self.sock.makefile("rb")
        self.session = None
        self.read_line()  # hello
        self.send({"op": "open", "form": "signup", "id": "setup"})
        for message in self.until_pong():
            if message.get("event") == "opened":
                self.session = message["session"]

    def send(self, request):
        self.sock.sendall(json.dumps(request, ensure_ascii=False).encode() + b"\n")

    def read_line(self):
        line = self.reader.readline()
        if not line:
            return None
        text = line.decode("utf-8")
        message = json.loads(text)
        errors = sorted(SERVER.iter_errors(message), key=lambda e: e.path)
        self.checks.check(not errors, "a line outside the schema: %s\n  %s" % (text.strip(), "; ".join(e.message for e in errors[:3])))
        self.seen["lines"] += 1
        self.seen.setdefault(message.get("event"), 0)
        self.seen[message.get("event")] += 1
        return message

    def until_pong(self):
        """Reads (and validates) every line up to the pong of a fresh barrier."""
        self.barrier += 1
        mark = "barrier-%d" % self.barrier
        self.send({"op": "ping", "id": mark})
        messages = []
        while True:
            message = self.read_line()
            if message is None or message.get("event") == "bye":
                # Closed by the daemon (a budget, say): a fresh connection goes on.
                self.sock.close()
                self.connect()
                return messages
            if message.get("event") == "pong" and message.get("id") == mark:
                return messages
            messages.append(message)


def real(draw_value, real_value, use_real):
    return real_value if use_real and real_value is not None else draw_value


def main():
    binary = sys.argv[1]
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
    checks = Checks("schema_property_test")
    daemon = Daemon(binary, args=FAST_HASH)
    daemon.start()
    seen = {"lines": 0}
    sent = [0]
    try:
        peers = [Peer(daemon.sock, checks, seen) for _ in range(4)]

        @settings(max_examples=count, deadline=None, database=None, phases=[Phase.generate],
                  suppress_health_check=list(HealthCheck))
        @given(request=REQUESTS, which=st.integers(0, 3), swap=st.booleans(), form=st.sampled_from(FORMS), field=st.sampled_from(FIELDS))
        def exchange(request, which, swap, form, field):
            peer = peers[which]
            if swap:
                if "session" in request:
                    request["session"] = real(request["session"], peer.session, True)
                if request.get("op") == "open":
                    request["form"] = form
                if request.get("op") == "set":
                    request["field"] = field
            peer.send(request)
            sent[0] += 1
            peer.until_pong()

        exchange()
        for peer in peers:
            peer.until_pong()
            peer.sock.close()
        checks.check(sent[0] >= count, "sent %d generated requests (asked for %d)" % (sent[0], count))
        # The generated requests reached real forms, not only refusals.
        for event in ("validation", "error", "opened", "closed"):
            checks.check(seen.get(event, 0) > 0, "some replies were %s events: %s" % (event, seen))
        print("sent %d generated requests; %d lines back, every one valid: %s" % (sent[0], seen["lines"],
              ", ".join("%s %d" % (k, v) for k, v in sorted(seen.items(), key=lambda kv: str(kv[0])) if k != "lines")))
    finally:
        checks.check(daemon.stop() == 0, "daemon exits 0")
    checks.done()


if __name__ == "__main__":
    main()
