#!/usr/bin/env python3
"""uid 65534 holds 16 connections x 16 signup sessions; 40 of its connections ask `sessions`
(limit 500) and `status` again as each answer arrives, while root's set + ping round trip is
measured idle and then under the flood. A measurement, not a check (issue 27); root only.
usage: listing_flood.py path/to/signupd
"""
import atexit
import shutil
import json, os, socket, subprocess, sys, time, statistics, selectors, tempfile
BIN=sys.argv[1]
d=tempfile.mkdtemp(); sock=os.path.join(d,"s.sock")
atexit.register(shutil.rmtree, d, ignore_errors=True)  # removed when the run ends
p=subprocess.Popen([BIN,"--socket",sock,"--database",os.path.join(d,"a.sqlite"),"--socket-mode","0666","--log-level","error"],stdout=subprocess.DEVNULL,stderr=subprocess.DEVNULL)
os.chmod(d,0o711)
while not os.path.exists(sock): time.sleep(0.05)
time.sleep(0.3)
def conn(uid=None):
    s=socket.socket(socket.AF_UNIX)
    if uid: os.setegid(uid); os.seteuid(uid)
    try: s.connect(sock)
    finally:
        if uid: os.seteuid(0); os.setegid(0)
    f=s.makefile("rb"); f.readline(); return s,f
def rt(s,f,reqs,tag):
    s.sendall(b"".join(json.dumps(r).encode()+b"\n" for r in reqs)+json.dumps({"op":"ping","id":tag}).encode()+b"\n")
    while True:
        e=json.loads(f.readline())
        if e.get("event")=="pong" and e.get("id")==tag: return
# neighbour: 16 connections x 16 sessions = 256 sessions
N=65534
holders=[]
for i in range(16):
    s,f=conn(N); rt(s,f,[{"op":"open","form":"signup"} for _ in range(16)],"x"); holders.append((s,f))
vs,vf=conn(); rt(vs,vf,[{"op":"open","form":"signup"}],"o")
def measure(n=300):
    lat=[]
    for i in range(n):
        t=time.perf_counter(); rt(vs,vf,[{"op":"set","field":"username","value":"vic%d"%(i%7)}],"m%d"%i); lat.append((time.perf_counter()-t)*1000)
    lat.sort(); return lat[len(lat)//2], lat[int(len(lat)*0.99)-1], lat[-1]
idle=measure()
flood=r'''
import selectors, socket, sys, os, json, signal
n=[0]
signal.signal(signal.SIGTERM, lambda *a: (print(n[0], flush=True), os._exit(0)))
path=sys.argv[1]; sel=selectors.DefaultSelector()
reqs=[b'{"op":"sessions","limit":500}\n', b'{"op":"status"}\n']
for i in range(40):
    s=socket.socket(socket.AF_UNIX); s.connect(path); s.setblocking(False); sel.register(s, selectors.EVENT_READ, i); s.sendall(reqs[i%2])
print("go",flush=True)
while True:
    for k,_ in sel.select():
        data=k.fileobj.recv(1<<20)
        if not data: sys.exit(0)
        for _ in range(data.count(b"\n")):
            n[0]+=1; k.fileobj.sendall(reqs[k.data%2])
'''
fl=subprocess.Popen(["setpriv","--reuid",str(N),"--regid",str(N),"--clear-groups",sys.executable,"-c",flood,sock],stdout=subprocess.PIPE,text=True)
fl.stdout.readline(); time.sleep(1)
under=measure()
fl.terminate(); answers=fl.stdout.readline().strip(); p.kill(); print('flood answers', answers)
print("victim set+ping p50/p99/max ms: idle %.2f/%.2f/%.2f; under sessions+status flood from 40 conns %.2f/%.2f/%.2f"%(idle+under))
