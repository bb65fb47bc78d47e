#!/usr/bin/env python3
"""Helper-20's fan-out attack, adapted: uid 65534 holds SESSIONS sessions, each with VIEWS
attached connections (as many as it can), the openers pipeline password sets and the views
send 40 locale requests a second each; root's ping and set round trips idle vs under attack.
A measurement, not a check (ROBUSTNESS.md, issue 27's fresh eyes); root only.
usage: view_fanout.py path/to/signupd SESSIONS VIEWS SECONDS [signupd options...]
  PINGONLY=1: the victim sends ping only; OWN=1: the connections open sessions of their own
  (the control); NICE=1: the attacker runs at nice 19; UIDS=N: N attackers, uids 65534
  down, each with SESSIONS x VIEWS (helper-22: three uids hurt where one did not).
"""
import atexit
import shutil
import json, os, socket, subprocess, sys, tempfile, time, selectors
BIN, SESSIONS, VIEWS, DUR = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
extra = sys.argv[5:]
d = tempfile.mkdtemp(); sock = os.path.join(d, "s.sock")
atexit.register(shutil.rmtree, d, ignore_errors=True)  # removed when the run ends
p = subprocess.Popen([BIN, "--socket", sock, "--database", os.path.join(d, "a.sqlite"), "--socket-mode", "0666", "--log-level", "error",
                      "--max-connects-per-user-per-second", "0"] + extra, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
os.chmod(d, 0o711); 
while not os.path.exists(sock): time.sleep(0.05)
time.sleep(0.3)
def conn():
    s = socket.socket(socket.AF_UNIX); s.connect(sock); f = s.makefile("rb"); f.readline(); return s, f
vs, vf = conn()
def rt(reqs, tag):
    vs.sendall(b"".join(json.dumps(r).encode() + b"\n" for r in reqs) + json.dumps({"op": "ping", "id": tag}).encode() + b"\n")
    while True:
        e = json.loads(vf.readline())
        if e.get("event") == "pong" and e.get("id") == tag: return
rt([{"op": "open", "form": "signup"}], "o")
def measure(n=300):
    lat = []
    for i in range(n):
        t = time.perf_counter(); rt([] if os.environ.get("PINGONLY") else [{"op": "set", "field": "username", "value": "vic%d" % (i % 7)}], "m%d" % i); lat.append((time.perf_counter() - t) * 1000)
    lat.sort(); return lat[len(lat) // 2], lat[int(len(lat) * 0.99) - 1], lat[-1]
idle = measure()
attack = r'''
import json, socket, sys, time, selectors
path, S, V, dur = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
import os; OWN = os.environ.get("OWN") == "1"
def conn():
    s = socket.socket(socket.AF_UNIX); s.connect(path); f = s.makefile("rb"); f.readline(); return s, f
openers, views, refused = [], [], 0
for i in range(S):
    s, f = conn(); first = f.readline() if False else None
    try:
        s.sendall(b'{"op":"open","form":"signup"}\n'); sid = json.loads(f.readline())["session"]; openers.append(s)
    except Exception as e:
        print("open %d failed: %r %r" % (i, e, f.read()[:300]), flush=True); raise
    for j in range(V):
        v, vf = conn(); v.sendall((b'{"op":"attach","session":"%s"}\n' % sid.encode()) if not OWN else b'{"op":"open","form":"signup"}\n')
        if json.loads(vf.readline())["event"] == "error": refused += 1; v.close()
        else: views.append(v)
sel = selectors.DefaultSelector()
for s in openers + views: s.setblocking(False); sel.register(s, selectors.EVENT_READ)
sets = "".join(json.dumps({"op": "set", "field": "password", "value": ["abc", "abcdef"][i % 2]}) + "\n" for i in range(200)).encode()
locs = "".join(json.dumps({"op": "locale", "locale": ["en", "zh-CN"][i % 2]}) + "\n" for i in range(40)).encode()
print("attacking with %d sessions, %d views attached, %d attaches refused" % (len(openers), len(views), refused), flush=True)
end = time.time() + dur; last = 0
while time.time() < end:
    for s in openers:
        try: s.send(sets)
        except (BlockingIOError, OSError): pass
    if time.time() - last > 1:
        last = time.time()
        for v in views:
            try: v.send(locs)
            except (BlockingIOError, OSError): pass
    for key, _ in sel.select(0.001):
        try: key.fileobj.recv(1 << 20)
        except (BlockingIOError, OSError): pass
'''
attackers = []
for uid in range(65534, 65534 - int(os.environ.get("UIDS", "1")), -1):
    attackers.append(subprocess.Popen(([] if os.environ.get("NICE") is None else ["nice", "-n", "19"]) + ["setpriv", "--reuid", str(uid), "--regid", str(uid), "--clear-groups", sys.executable, "-c", attack, sock, str(SESSIONS), str(VIEWS), str(DUR + 30)], stdout=subprocess.PIPE, text=True))
    print("uid %d: %s" % (uid, attackers[-1].stdout.readline().strip()), flush=True)
time.sleep(2)
under = measure()
alive = p.poll() is None
for a in attackers: a.kill()
p.kill()
print("victim set+ping p50/p99/max ms: idle %.2f/%.2f/%.2f; under attack %.2f/%.2f/%.2f; daemon alive: %s" % (idle + under + (alive,)))
